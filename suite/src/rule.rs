//! Rule ids as data: one constant for each id of the catalog (`cases/rules.toml`), written
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
//! ```

use std::fmt;

/// The id of a rule of the catalog (stated, inferred or cited).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(&'static str);

impl RuleId {
    /// The id, as the catalog writes it.
    pub fn as_str(self) -> &'static str {
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
}
