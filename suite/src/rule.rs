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
