//! Rule ids are data: every rule id written in the kit's code (outside its unit tests) and
//! every `x-asr-rule` of its schemas is one the catalog knows, so that a rule cannot be
//! checked, reported or mapped under an id the catalog does not have.

use crate::helpers::root;
use asr_suite::catalog::Catalog;
use std::path::{Path, PathBuf};

/// Every `"ASR-..."` string literal in `text`.
fn literals(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("\"ASR-") {
        let after = &rest[at + 1..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(after.len());
        if after[end..].starts_with('"') {
            found.push(after[..end].to_owned());
        }
        rest = &after[end..];
    }
    found
}

fn known(catalog: &Catalog, id: &str) -> bool {
    catalog.knows(id) || catalog.cited.iter().any(|c| c.id == id)
}

fn rust_files(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir)
        .expect("a source directory")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn every_rule_id_in_code_is_in_the_catalog() {
    let catalog = Catalog::embedded();
    let mut files = Vec::new();
    for dir in ["suite/src", "runner/src"] {
        rust_files(&root().join(dir), &mut files);
    }
    assert!(files.len() > 20, "{} source files", files.len());
    let mut unknown = Vec::new();
    let mut seen = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).expect("source");
        // Unit tests cite made-up ids on purpose, to see them refused.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for id in literals(code) {
            seen += 1;
            // A prefix (`"ASR-X-"`) names a family, not a rule.
            if !id.ends_with('-') && !known(catalog, &id) {
                unknown.push(format!("{}: {id}", file.display()));
            }
        }
    }
    assert!(seen > 50, "the scan found {seen} rule ids in code");
    assert!(
        unknown.is_empty(),
        "rule ids the catalog does not know: {unknown:#?}"
    );
}

#[test]
fn every_rule_a_schema_names_is_in_the_catalog() {
    let catalog = Catalog::embedded();
    let mut unknown = Vec::new();
    let mut seen = 0;
    for entry in std::fs::read_dir(root().join("schemas"))
        .expect("schemas")
        .flatten()
    {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("schema")).expect("json");
        let mut stack = vec![&schema];
        while let Some(value) = stack.pop() {
            match value {
                serde_json::Value::Object(map) => {
                    let listed = map.get("x-asr-rules").and_then(|r| r.as_array());
                    for rule in map
                        .get("x-asr-rule")
                        .into_iter()
                        .chain(listed.into_iter().flatten())
                    {
                        seen += 1;
                        let id = rule.as_str().unwrap_or("(not a string)");
                        if !known(catalog, id) {
                            unknown.push(format!("{}: {id}", path.display()));
                        }
                    }
                    stack.extend(map.values());
                }
                serde_json::Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
    }
    assert!(seen > 30, "the scan found {seen} x-asr-rule members");
    assert!(
        unknown.is_empty(),
        "x-asr-rule ids the catalog does not know: {unknown:#?}"
    );
}

#[test]
fn the_scan_finds_literals_and_only_whole_ones() {
    assert_eq!(
        literals(r#"rule("ASR-212") + "ASR-X-003", "ASR-X-" but not ASR-999 or "ASR-1 x""#),
        ["ASR-212", "ASR-X-003", "ASR-X-"]
    );
    assert!(!known(Catalog::embedded(), "ASR-999"));
    assert!(
        known(Catalog::embedded(), "ASR-062"),
        "cited rules are known"
    );
}
