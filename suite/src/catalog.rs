//! The rule catalog: every ASR rule stated in the spec text in hand, the rules it cites
//! without stating, and the kit's inferred structural checks. The data lives in
//! `cases/rules.toml`; this module reads it and answers questions about it.

use crate::diagnostic::Severity;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// The catalog as written in `cases/rules.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Catalog {
    /// The rules stated in the spec text in hand.
    #[serde(rename = "rule")]
    pub rules: Vec<Rule>,
    /// Rules the text cites but does not state.
    pub cited: Vec<Cited>,
    /// Structural checks that the examples imply but no rule in hand states.
    pub inferred: Vec<Inferred>,
}

/// One ASR rule stated in the spec text.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Rule {
    /// `ASR-NNN`.
    pub id: String,
    /// The spec file that states it.
    pub file: String,
    /// The heading it stands under.
    pub section: String,
    /// The requirement keywords of its statement.
    pub levels: Vec<Level>,
    /// Whom it binds.
    pub roles: Vec<Role>,
    /// What can check it.
    pub checks: Vec<CheckKind>,
    /// What it requires, in one line.
    pub summary: String,
    /// `sha256:` and the hex digest of the statement text.
    pub fingerprint: String,
    /// The kit's decisions where the text in hand is silent, and how the rule is tested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// A rule cited by the text in hand whose own text is not in hand.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cited {
    /// `ASR-NNN`.
    pub id: String,
    /// Always `cited, text not in hand`.
    pub status: String,
    /// What it is about, as far as the citing text tells.
    pub topic: String,
    /// The rules whose statements cite it.
    pub cited_by: Vec<String>,
    /// Where it is cited outside rule statements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

/// One of the kit's inferred structural checks (`ASR-X-NNN`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Inferred {
    /// `ASR-X-NNN`.
    pub id: String,
    /// Short name.
    pub title: String,
    /// The severity of its findings (some findings of a check may weigh less; see `summary`).
    pub severity: Severity,
    /// What it requires, in one line.
    pub summary: String,
    /// What in the spec text implies it.
    pub basis: String,
}

/// A requirement keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// MUST
    #[serde(rename = "MUST")]
    Must,
    /// MUST NOT
    #[serde(rename = "MUST NOT")]
    MustNot,
    /// SHOULD
    #[serde(rename = "SHOULD")]
    Should,
    /// SHOULD NOT
    #[serde(rename = "SHOULD NOT")]
    ShouldNot,
    /// MAY
    #[serde(rename = "MAY")]
    May,
}

impl Level {
    /// The keyword as the spec writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Must => "MUST",
            Level::MustNot => "MUST NOT",
            Level::Should => "SHOULD",
            Level::ShouldNot => "SHOULD NOT",
            Level::May => "MAY",
        }
    }
}

/// Whom a rule binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Writes streams.
    Producer,
    /// Reads and presents streams.
    Reader,
    /// Computes from streams (totals, blame, search).
    Consumer,
    /// Checks streams.
    Validator,
}

impl Role {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Producer => "producer",
            Role::Reader => "reader",
            Role::Consumer => "consumer",
            Role::Validator => "validator",
        }
    }
}

/// What can check a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckKind {
    /// Visible in one ASR stream: the validator checks it.
    Stream,
    /// Behaviour of a reader on a stream: tested through readings.
    Reader,
    /// Fidelity to the native source: tested with source fixtures.
    Source,
}

impl CheckKind {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckKind::Stream => "stream",
            CheckKind::Reader => "reader",
            CheckKind::Source => "source",
        }
    }
}

/// Failure to read a catalog.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The TOML does not parse or does not have the catalog's shape.
    #[error("failed to parse the rule catalog: {0}")]
    Parse(#[from] toml::de::Error),
    /// The data parses but contradicts itself.
    #[error("failed to accept the rule catalog: {0}")]
    Invalid(String),
}

/// The text of the catalog compiled into the kit.
pub const CATALOG_TOML: &str = include_str!("../cases/rules.toml");

impl Catalog {
    /// The catalog compiled into the kit, parsed once.
    pub fn embedded() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        CATALOG.get_or_init(|| {
            Catalog::parse(CATALOG_TOML)
                .unwrap_or_else(|e| panic!("the embedded catalog is broken: {e}"))
        })
    }

    /// Parses and checks a catalog.
    pub fn parse(text: &str) -> Result<Catalog, CatalogError> {
        let catalog: Catalog = toml::from_str(text)?;
        catalog.check()?;
        Ok(catalog)
    }

    fn check(&self) -> Result<(), CatalogError> {
        let mut seen = BTreeSet::new();
        let ids = self
            .rules
            .iter()
            .map(|r| (&r.id, is_rule_id(&r.id)))
            .chain(self.cited.iter().map(|c| (&c.id, is_rule_id(&c.id))))
            .chain(self.inferred.iter().map(|x| (&x.id, is_inferred_id(&x.id))));
        for (id, well_formed) in ids {
            if !well_formed {
                return Err(CatalogError::Invalid(format!(
                    "`{id}` is not a well-formed id"
                )));
            }
            if !seen.insert(id.as_str()) {
                return Err(CatalogError::Invalid(format!("`{id}` appears twice")));
            }
        }
        for rule in &self.rules {
            if rule.checks.is_empty() || rule.roles.is_empty() || rule.summary.trim().is_empty() {
                return Err(CatalogError::Invalid(format!(
                    "{} needs roles, checks and a summary",
                    rule.id
                )));
            }
            if !rule.fingerprint.starts_with("sha256:") || rule.fingerprint.len() != 71 {
                return Err(CatalogError::Invalid(format!(
                    "{} has a malformed fingerprint",
                    rule.id
                )));
            }
        }
        Ok(())
    }

    /// The stated rule with this id.
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// The inferred check with this id.
    pub fn inferred(&self, id: &str) -> Option<&Inferred> {
        self.inferred.iter().find(|r| r.id == id)
    }

    /// The one-line summary of a stated rule or an inferred check.
    pub fn summary(&self, id: &str) -> Option<&str> {
        self.rule(id)
            .map(|r| r.summary.as_str())
            .or_else(|| self.inferred(id).map(|x| x.summary.as_str()))
    }

    /// Whether a stated rule or inferred check with this id exists.
    pub fn knows(&self, id: &str) -> bool {
        self.summary(id).is_some()
    }

    /// The stated rules that the validator checks.
    pub fn stream_rules(&self) -> impl Iterator<Item = &Rule> {
        self.rules
            .iter()
            .filter(|r| r.checks.contains(&CheckKind::Stream))
    }
}

/// How the catalog and a spec text differ.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpecComparison {
    /// Rules the spec states that the catalog does not have.
    pub new: Vec<String>,
    /// Rules whose statement text changed: id, catalog fingerprint, spec fingerprint.
    pub changed: Vec<(String, String, String)>,
    /// Rules in the catalog that the spec no longer states.
    pub gone: Vec<String>,
    /// Rules whose requirement keywords in the spec differ from the catalog's `levels`.
    pub levels: Vec<String>,
    /// Rules the spec cites without stating that the catalog does not list as cited, and
    /// cited entries the spec no longer cites.
    pub cited: Vec<String>,
}

impl SpecComparison {
    /// The catalog and the spec agree.
    pub fn agrees(&self) -> bool {
        self.new.is_empty()
            && self.changed.is_empty()
            && self.gone.is_empty()
            && self.levels.is_empty()
            && self.cited.is_empty()
    }
}

impl Catalog {
    /// Compares the catalog with the statements of a spec text.
    pub fn compare(&self, spec: &crate::spec::SpecText) -> SpecComparison {
        let mut comparison = SpecComparison::default();
        for statement in &spec.statements {
            match self.rule(&statement.id) {
                None => comparison.new.push(statement.id.clone()),
                Some(rule) => {
                    let fingerprint = statement.fingerprint();
                    if rule.fingerprint != fingerprint {
                        comparison.changed.push((
                            rule.id.clone(),
                            rule.fingerprint.clone(),
                            fingerprint,
                        ));
                    }
                    if rule.levels != levels_of(&statement.text) {
                        comparison.levels.push(rule.id.clone());
                    }
                }
            }
        }
        for rule in &self.rules {
            if !spec.statements.iter().any(|s| s.id == rule.id) {
                comparison.gone.push(rule.id.clone());
            }
        }
        let listed: BTreeSet<&str> = self.cited.iter().map(|c| c.id.as_str()).collect();
        let cited: BTreeSet<&str> = spec.cited.keys().map(String::as_str).collect();
        comparison.cited = listed
            .symmetric_difference(&cited)
            .map(|id| (*id).to_owned())
            .collect();
        comparison
    }
}

/// The requirement keywords a statement uses, in catalog order.
pub fn levels_of(statement: &str) -> Vec<Level> {
    let mut rest = statement.to_owned();
    let mut levels = Vec::new();
    for (word, level) in [
        ("MUST NOT", Level::MustNot),
        ("SHOULD NOT", Level::ShouldNot),
    ] {
        if rest.contains(word) {
            levels.push(level);
            rest = rest.replace(word, "");
        }
    }
    for (word, level) in [
        ("MUST", Level::Must),
        ("SHOULD", Level::Should),
        ("MAY", Level::May),
    ] {
        if rest.contains(word) {
            levels.push(level);
        }
    }
    levels.sort();
    levels
}

fn is_rule_id(id: &str) -> bool {
    id.len() == 7 && id.starts_with("ASR-") && id[4..].bytes().all(|b| b.is_ascii_digit())
}

fn is_inferred_id(id: &str) -> bool {
    id.len() == 9 && id.starts_with("ASR-X-") && id[6..].bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_catalog_parses() {
        let catalog = Catalog::embedded();
        assert!(!catalog.rules.is_empty());
        assert!(catalog.knows("ASR-212"));
        assert!(catalog.knows("ASR-X-003"));
        assert!(!catalog.knows("ASR-223"));
    }

    #[test]
    fn a_duplicate_id_is_refused() {
        let rule = r#"[[rule]]
id = "ASR-200"
file = "f"
section = "s"
levels = ["MUST"]
roles = ["producer"]
checks = ["stream"]
summary = "x"
fingerprint = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
"#;
        let text = format!("cited = []\ninferred = []\n{rule}{rule}");
        let err = Catalog::parse(&text).expect_err("duplicate");
        assert!(err.to_string().contains("appears twice"), "{err}");
        let one = format!("cited = []\ninferred = []\n{rule}");
        assert!(Catalog::parse(&one).is_ok());
    }

    #[test]
    fn unknown_members_and_levels_are_refused() {
        let text = r#"cited = []
inferred = []
[[rule]]
id = "ASR-200"
file = "f"
section = "s"
levels = ["MUSTN'T"]
roles = ["producer"]
checks = ["stream"]
summary = "x"
fingerprint = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
"#;
        assert!(Catalog::parse(text).is_err());
        let extra = text
            .replace("MUSTN'T", "MUST")
            .replace("summary", "colour = 1\nsummary");
        assert!(Catalog::parse(&extra).is_err());
    }
}
