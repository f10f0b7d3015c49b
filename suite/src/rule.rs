//! Rule ids as data: one constant for each id and each clause of the catalog
//! (`cases/rules.toml`), written
//! by the build script, so that code names a rule only through an id the catalog has. A
//! misspelt id does not compile, and the build fails on an `x-asr-rule` of a schema that
//! the catalog does not have.
//!
//! ```
//! use asr_suite::rule::{self, RuleId};
//!
//! assert_eq!(rule::ASR_212.as_str(), "ASR-212");
//! assert_eq!(RuleId::known("ASR-X-014"), Some(rule::ASR_X_014));
//! assert_eq!(RuleId::known("ASR-X-014 "), None);
//! assert_eq!((rule::ASR_221_A.as_str(), rule::ASR_221_A.rule()), ("ASR-221.a", rule::ASR_221));
//! ```

use std::fmt;

/// The id of a rule of the catalog (stated, inferred or cited).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(&'static str);

impl RuleId {
    /// The id, as the catalog writes it.
    pub const fn as_str(self) -> &'static str {
        self.0
    }

    /// The id of the catalog written `id`, when there is one.
    pub fn known(id: &str) -> Option<RuleId> {
        ALL.iter().copied().find(|r| r.0 == id)
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl serde::Serialize for RuleId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0)
    }
}

/// Only an id of the catalog reads as a `RuleId`: what cites another id (an adapter's
/// answer) keeps it as a string.
impl<'de> serde::Deserialize<'de> for RuleId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        RuleId::known(&id)
            .ok_or_else(|| serde::de::Error::custom(format!("{id:?} is no rule of the catalog")))
    }
}

impl From<RuleId> for String {
    fn from(rule: RuleId) -> String {
        rule.0.to_owned()
    }
}

impl PartialEq<RuleId> for String {
    fn eq(&self, other: &RuleId) -> bool {
        self == other.0
    }
}

impl PartialEq<RuleId> for str {
    fn eq(&self, other: &RuleId) -> bool {
        self == other.0
    }
}

impl PartialEq<str> for RuleId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for RuleId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// A clause of a rule of the catalog (`ASR-221.a`): one requirement of its statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub struct ClauseId {
    id: &'static str,
    rule: RuleId,
}

impl ClauseId {
    /// The id, as the catalog writes it.
    pub const fn as_str(self) -> &'static str {
        self.id
    }

    /// The rule whose clause it is.
    pub const fn rule(self) -> RuleId {
        self.rule
    }
}

impl fmt::Display for ClauseId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id)
    }
}

include!(concat!(env!("OUT_DIR"), "/rule_ids.rs"));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn the_constants_are_the_catalogs_ids_and_nothing_else() {
        let catalog = Catalog::embedded();
        let mut from_catalog: Vec<&str> = catalog
            .rules
            .iter()
            .map(|r| r.id.as_str())
            .chain(catalog.cited.iter().map(|c| c.id.as_str()))
            .chain(catalog.inferred.iter().map(|x| x.id.as_str()))
            .collect();
        let mut constants: Vec<&str> = ALL.iter().map(|r| r.as_str()).collect();
        from_catalog.sort_unstable();
        constants.sort_unstable();
        assert_eq!(constants, from_catalog);
    }

    /// The lines of the kit's code (`suite/src`, `runner/src`) that spell a rule id as a
    /// string literal: comments, `mod tests` blocks and modules compiled only for tests left
    /// out.
    fn rule_id_literals() -> Vec<String> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        for dir in ["suite/src", "runner/src"] {
            walk(&root.join(dir), &mut files);
        }
        let mut test_only = std::collections::BTreeSet::new();
        for file in &files {
            let text = std::fs::read_to_string(file).expect("readable");
            let dir = match file.file_name().and_then(|n| n.to_str()) {
                Some("mod.rs" | "lib.rs" | "main.rs") => file.parent().expect("a dir").to_owned(),
                _ => file.with_extension(""),
            };
            let mut rest = text.as_str();
            while let Some(at) = rest.find("#[cfg(test)]") {
                rest = &rest[at + "#[cfg(test)]".len()..];
                let item = rest.trim_start();
                if let Some(name) = item
                    .strip_prefix("mod ")
                    .and_then(|m| m.strip_suffix_at(';'))
                {
                    test_only.insert(dir.join(format!("{name}.rs")));
                    test_only.insert(dir.join(name).join("mod.rs"));
                }
            }
        }
        let mut found = Vec::new();
        for file in files.iter().filter(|f| !test_only.contains(*f)) {
            let text = std::fs::read_to_string(file).expect("readable");
            let code = text
                .split("#[cfg(test)]\nmod tests {")
                .next()
                .unwrap_or_default();
            for (n, line) in code.lines().enumerate() {
                if !line.trim_start().starts_with("//") && spells_a_rule_id(line) {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
        found
    }

    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("a directory").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// Whether a line has a string literal that starts with a rule id (`"ASR-2`, `"ASR-X-0`).
    fn spells_a_rule_id(line: &str) -> bool {
        line.match_indices("\"ASR-").any(|(at, m)| {
            let rest = line[at + m.len()..].trim_start_matches("X-");
            rest.starts_with(|c: char| c.is_ascii_digit())
        })
    }

    trait StripAt {
        fn strip_suffix_at(&self, end: char) -> Option<&str>;
    }

    impl StripAt for str {
        /// The text before the first `end`, when it is one word.
        fn strip_suffix_at(&self, end: char) -> Option<&str> {
            let word = self.split(end).next()?;
            word.chars()
                .all(|c| c.is_alphanumeric() || c == '_')
                .then_some(word)
        }
    }

    #[test]
    fn code_names_rules_only_through_the_constants() {
        let found = rule_id_literals();
        assert!(
            found.is_empty(),
            "rule ids spelt as literals in code (use rule::ASR_...):\n{}",
            found.join("\n")
        );
        assert!(spells_a_rule_id(r#"x("ASR-212")"#) && spells_a_rule_id(r#""ASR-X-003""#));
        assert!(!spells_a_rule_id(r#"id.starts_with("ASR-")"#) && !spells_a_rule_id(r#""ASR-X-""#));
    }

    #[test]
    fn only_an_id_of_the_catalog_reads_as_a_rule_id() {
        let read = |text: &str| serde_json::from_str::<RuleId>(text).map_err(|e| e.to_string());
        assert_eq!(read(r#""ASR-X-014""#), Ok(ASR_X_014));
        assert_eq!(
            serde_json::to_string(&ASR_212).ok().as_deref(),
            Some(r#""ASR-212""#)
        );
        for unknown in [r#""ASR-999""#, r#""asr-212""#, r#""ASR-212 ""#, "212"] {
            assert!(read(unknown).is_err(), "{unknown}");
        }
        assert!(read(r#""ASR-999""#).is_err_and(|e| e.contains("no rule of the catalog")));
    }

    #[test]
    fn every_clause_of_the_catalog_has_a_constant_of_its_rule() {
        let catalog = Catalog::embedded();
        let clauses: Vec<(&str, &str)> = catalog
            .rules
            .iter()
            .flat_map(|r| {
                r.clauses
                    .iter()
                    .map(move |c| (r.id.as_str(), c.id.as_str()))
            })
            .collect();
        assert!(clauses.len() > 60, "{}", clauses.len());
        assert_eq!(CLAUSES.len(), clauses.len());
        for (clause, (rule, id)) in CLAUSES.iter().zip(&clauses) {
            assert_eq!((clause.rule().as_str(), clause.as_str()), (*rule, *id));
        }
    }
}
