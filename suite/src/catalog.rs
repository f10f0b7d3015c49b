//! The rule catalog: every ASR rule stated in the spec text in hand with the clauses a
//! stream can break, the rules it cites without stating, the value sets of its members and
//! the kit's inferred structural checks. The data lives in `cases/rules.toml`; this module
//! reads it and answers questions about it.

use crate::diagnostic::Severity;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
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
    /// The members whose values the spec text enumerates.
    #[serde(rename = "value_set", default, skip_serializing_if = "Vec::is_empty")]
    pub value_sets: Vec<ValueSet>,
    /// Structural checks that the examples imply but no rule in hand states.
    pub inferred: Vec<Inferred>,
    /// Where the spec text in hand does not decide and the kit does: each decision point,
    /// with the sentence it rests on. An implementation that decides otherwise is reported
    /// as non-strict on it.
    #[serde(rename = "decision", default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<Decision>,
}

/// One decision point of the kit: where the spec text in hand is silent or open, what the
/// kit's cases and reference decide.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Decision {
    /// A short kebab-case name, cited by sidecars (`decision`) and reports.
    pub id: String,
    /// The rules (or inferred checks) it decides for.
    pub rules: Vec<String>,
    /// What the kit decides, in one sentence.
    pub summary: String,
    /// The sentence of the spec it rests on, quoted, and what the text leaves open.
    pub rests_on: String,
    /// A member of the reading this decision shapes (a JSON Pointer; `*` stands for any one
    /// token), for decisions about how the reading writes what it read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reading: Option<String>,
    /// How an answer that decides otherwise on `reading` is still recognised.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub equivalence: Vec<Equivalence>,
    /// The members of a reading a case resting on this decision may read otherwise (JSON
    /// Pointer patterns: `*` stands for any one token, `{tag}` for the id of a record with
    /// that tag, as `judge::members::Kinds` tags them): the case's decision softens a
    /// mismatch on one of them, and on nothing else. `totals.ownRecords/{tag}` is the crediting
    /// of such a record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// The text in hand decides, once two of its sentences that seem to pull apart are read
    /// together, and the decision records that reading: an answer that differs fails, and
    /// a case naming the decision softens nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub settled: bool,
    /// The implementation-defined (`i_`) cases this decision leaves to implementations:
    /// either branch passes, and the reference's choice is the kit's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<String>,
}

/// A way two values of a reading member are the same but for a decision of the kit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Equivalence {
    /// Arrays with the same elements in another order.
    Unordered,
    /// Session references spelled otherwise that name the same session (the case of the hex
    /// digits of an escape, an escaped character that needs none): compared in canonical form.
    SessionSpelling,
}

impl Equivalence {
    /// `value` written the one way the kit writes it.
    pub fn normal(self, value: &Value) -> Value {
        match (self, value) {
            (Equivalence::Unordered, Value::Array(items)) => {
                let mut items = items.clone();
                items.sort_by_cached_key(Value::to_string);
                Value::Array(items)
            }
            (Equivalence::SessionSpelling, Value::String(text)) => {
                Value::String(crate::model::canonical_session(text).unwrap_or_else(|| text.clone()))
            }
            (Equivalence::SessionSpelling, Value::Array(items)) => {
                Value::Array(items.iter().map(|v| self.normal(v)).collect())
            }
            _ => value.clone(),
        }
    }
}

impl Decision {
    /// Whether `pointer` is the reading member this decision shapes.
    pub fn shapes(&self, pointer: &str) -> bool {
        self.reading
            .as_deref()
            .is_some_and(|pattern| pattern_matches(pattern, pointer, &|_| Vec::new()))
    }

    /// Whether a mismatch at `pointer` is on one of the members a case resting on this
    /// decision is about (its `members`), the ids of records tagged by `tags`. The member a
    /// decision shapes is softened only where the values agree but for the decision
    /// (its `equivalence`), never by a case naming it.
    pub fn covers(&self, pointer: &str, tags: &dyn Fn(&str) -> Vec<String>) -> bool {
        self.members
            .iter()
            .any(|pattern| pattern_matches(pattern, pointer, tags))
    }
}

/// Whether a JSON Pointer matches a pattern of [`Decision::members`].
fn pattern_matches(pattern: &str, pointer: &str, tags: &dyn Fn(&str) -> Vec<String>) -> bool {
    let mut want = pattern.split('/');
    let mut got = pointer.split('/');
    loop {
        match (want.next(), got.next()) {
            (None, None) => return true,
            (Some(w), Some(g)) if w == "*" || w == g => {}
            (Some(w), Some(g)) => {
                let Some(tag) = w.strip_prefix('{').and_then(|t| t.strip_suffix('}')) else {
                    return false;
                };
                let id = g.replace("~1", "/").replace("~0", "~");
                if !tags(&id).iter().any(|t| t == tag) {
                    return false;
                }
            }
            _ => return false,
        }
    }
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
    /// The requirements of the statement that a stream can break one at a time, in the
    /// statement's order; only rules checked in streams have them.
    #[serde(rename = "clause", default, skip_serializing_if = "Vec::is_empty")]
    pub clauses: Vec<Clause>,
}

/// One requirement of a rule's statement that a stream can break on its own: what a negative
/// case or a mutator of a valid stream targets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Clause {
    /// The rule id, a dot and a letter: `ASR-221.a`.
    pub id: String,
    /// The requirement, in one line.
    pub text: String,
}

/// The values the spec text enumerates for one member, and whether others are allowed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ValueSet {
    /// The record type, a dot and the member's path (`plan.entries[].status`); the notation
    /// is defined in the header of `cases/rules.toml`.
    pub member: String,
    /// The values the text lists, in its order.
    pub values: Vec<String>,
    /// Whether other (vendor) values are allowed.
    pub open: bool,
    /// The rule whose statement gives the values or says whether others are allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// The text that lists the values and says whether others are allowed.
    pub source: String,
    /// The kit's decision, and why, where the text does not say whether the set is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ValueSet {
    /// The values `record` gives the member, in the notation of [`ValueSet::member`]: for
    /// a `{}` path, the member names of the object it reaches; for `part(T)`, every part of
    /// type T (any type for `*`) in the record's part arrays (`content`, `displayContent`).
    ///
    /// ```
    /// use asr_suite::catalog::Catalog;
    ///
    /// let record = serde_json::json!({"type": "plan", "entries": [
    ///     {"status": "pending"}, {"status": "x-acme-held"}]});
    /// let set = Catalog::embedded().value_sets().iter()
    ///     .find(|s| s.member == "plan.entries[].status").expect("in the catalog");
    /// assert_eq!(set.values_in(record.as_object().expect("an object")), ["pending", "x-acme-held"]);
    /// ```
    pub fn values_in<'v>(&self, record: &'v Map<String, Value>) -> Vec<&'v str> {
        self.path().values_in(record)
    }

    /// Where the set's values are, read once to look in many records.
    pub(crate) fn path(&self) -> MemberPath<'_> {
        let (head, path) = self.member.split_once('.').unwrap_or((&self.member, ""));
        MemberPath {
            head,
            steps: path.split('.').collect(),
        }
    }
}

/// A [`ValueSet::member`], read.
pub(crate) struct MemberPath<'s> {
    head: &'s str,
    steps: Vec<&'s str>,
}

impl MemberPath<'_> {
    /// The values at the path in `record`.
    pub(crate) fn values_in<'v>(&self, record: &'v Map<String, Value>) -> Vec<&'v str> {
        follow(heads(self.head, record), &self.steps)
    }

    /// Whether the path can reach a value in a record of type `kind`: it starts at parts
    /// (which any record may hold), at any record, or at records of that type.
    #[cfg(any(test, feature = "fuzz"))]
    pub(crate) fn starts_in(&self, kind: Option<&str>) -> bool {
        self.head == "*" || self.head.starts_with("part(") || Some(self.head) == kind
    }
}

/// The objects of `record` that hold, or would hold, the last member of `member` (written in
/// the notation of [`ValueSet::member`]), and that member's name: for
/// `plan.entries[].priority`, each entry of a plan's `entries` and `priority`; for
/// `part(text).annotations`, each text part and `annotations`. What lacks an optional member
/// is found this way.
///
/// ```
/// use asr_suite::catalog::member_holders;
///
/// let record = serde_json::json!({"type": "plan", "entries": [
///     {"content": "a", "status": "pending", "priority": "high"}, {"content": "b", "status": "pending"}]});
/// let (holders, name) = member_holders("plan.entries[].priority", record.as_object().expect("an object"));
/// assert_eq!(name, "priority");
/// assert_eq!(holders.iter().filter(|entry| !entry.contains_key(name)).count(), 1);
/// ```
pub fn member_holders<'v, 'm>(
    member: &'m str,
    record: &'v Map<String, Value>,
) -> (Vec<&'v Map<String, Value>>, &'m str) {
    let (head, path) = member.split_once('.').unwrap_or((member, ""));
    let steps: Vec<&str> = path.split('.').collect();
    let Some((last, within)) = steps.split_last() else {
        return (Vec::new(), "");
    };
    let mut objects = heads(head, record);
    for step in within {
        let (name, array) = match step.strip_suffix("[]") {
            Some(name) => (name, true),
            None => (*step, false),
        };
        let reached = objects
            .into_iter()
            .flat_map(|object| object.iter())
            .filter(|(member, _)| name == "*" || *member == name)
            .map(|(_, value)| value);
        objects = if array {
            reached
                .filter_map(Value::as_array)
                .flatten()
                .filter_map(Value::as_object)
                .collect()
        } else {
            reached.filter_map(Value::as_object).collect()
        };
    }
    let name = last.strip_suffix("[]").unwrap_or(last);
    (objects, name.strip_suffix("{}").unwrap_or(name))
}

/// The objects a member path starts from: the record, when `head` is its type or `*`; for
/// `part(T)`, every part of type T (any type for `*`) in the record's part arrays.
fn heads<'v>(head: &str, record: &'v Map<String, Value>) -> Vec<&'v Map<String, Value>> {
    if let Some(part_type) = head.strip_prefix("part(").and_then(|h| h.strip_suffix(')')) {
        ["content", "displayContent"]
            .iter()
            .filter_map(|array| record.get(*array).and_then(Value::as_array))
            .flatten()
            .filter_map(Value::as_object)
            .filter(|part| {
                part_type == "*" || part.get("type").and_then(Value::as_str) == Some(part_type)
            })
            .collect()
    } else if head == "*" || record.get("type").and_then(Value::as_str) == Some(head) {
        vec![record]
    } else {
        Vec::new()
    }
}

/// The values the path `steps` reaches from each of `objects`.
fn follow<'v>(objects: Vec<&'v Map<String, Value>>, steps: &[&str]) -> Vec<&'v str> {
    let Some((step, rest)) = steps.split_first() else {
        return Vec::new();
    };
    let (name, suffix) = match (step.strip_suffix("[]"), step.strip_suffix("{}")) {
        (Some(name), _) => (name, "[]"),
        (_, Some(name)) => (name, "{}"),
        _ => (*step, ""),
    };
    // A named member is looked up; only `*` reads every member.
    let reached = objects.into_iter().flat_map(|object| {
        let named = (name != "*").then(|| object.get(name)).flatten();
        let every = (name == "*").then(|| object.values()).into_iter().flatten();
        named.into_iter().chain(every)
    });
    let values: Vec<&Value> = match suffix {
        "{}" => {
            return reached
                .filter_map(Value::as_object)
                .flat_map(|object| object.keys().map(String::as_str))
                .collect();
        }
        "[]" => reached.filter_map(Value::as_array).flatten().collect(),
        _ => reached.collect(),
    };
    if rest.is_empty() {
        values.into_iter().filter_map(Value::as_str).collect()
    } else {
        follow(
            values.into_iter().filter_map(Value::as_object).collect(),
            rest,
        )
    }
}

/// A rule cited by the text in hand whose own text is not in hand.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
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
    /// Whom it binds: every check binds validators; one a reading depends on binds readers.
    pub roles: Vec<Role>,
    /// What a reader makes of it (for a check that binds readers): PROTOCOL.md's answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader: Option<String>,
    /// The kit's decisions about how it is reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
}

/// A requirement keyword.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[non_exhaustive]
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

/// Whether an implementation playing `plays` is bound by a rule binding `roles`.
pub fn role_bound(roles: &[Role], plays: ProtocolRole) -> bool {
    match plays {
        ProtocolRole::Validator => roles.contains(&Role::Validator),
        ProtocolRole::Reader => roles.contains(&Role::Reader) || roles.contains(&Role::Consumer),
        ProtocolRole::Producer => roles.contains(&Role::Producer),
    }
}

/// The roles an adapter can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProtocolRole {
    /// Says whether streams are valid, with findings by rule.
    Validator,
    /// Reads streams and says how it understood them.
    Reader,
    /// Converts a native source into streams (protocol 1.1).
    Producer,
}

impl ProtocolRole {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolRole::Validator => "validator",
            ProtocolRole::Reader => "reader",
            ProtocolRole::Producer => "producer",
        }
    }
}

/// Whom a rule binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
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
#[non_exhaustive]
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
#[non_exhaustive]
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
        for check in &self.inferred {
            let reads = check.roles.contains(&Role::Reader);
            if check.roles.is_empty() || reads != check.reader.is_some() {
                return Err(CatalogError::Invalid(format!(
                    "{} needs roles, and says what a reader makes of it (`reader`) exactly when it binds readers",
                    check.id
                )));
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
            check_clauses(rule)?;
        }
        self.check_value_sets()
    }

    fn check_value_sets(&self) -> Result<(), CatalogError> {
        let mut members = BTreeSet::new();
        for set in &self.value_sets {
            let member = &set.member;
            if !is_member_path(member) {
                return Err(CatalogError::Invalid(format!(
                    "value set `{member}`: not a member path (see the notation in the catalog's header)"
                )));
            }
            if !members.insert(member.as_str()) {
                return Err(CatalogError::Invalid(format!(
                    "value set `{member}` appears twice"
                )));
            }
            let mut values = BTreeSet::new();
            if set.values.is_empty() || set.values.iter().any(|v| !values.insert(v)) {
                return Err(CatalogError::Invalid(format!(
                    "value set `{member}` needs values, each listed once"
                )));
            }
            if set.source.trim().is_empty() {
                return Err(CatalogError::Invalid(format!(
                    "value set `{member}` needs the source text that lists its values"
                )));
            }
            if let Some(rule) = set.rule.as_deref().filter(|r| self.rule(r).is_none()) {
                return Err(CatalogError::Invalid(format!(
                    "value set `{member}` names {rule}, which is no stated rule of the catalog"
                )));
            }
        }
        Ok(())
    }

    /// The stated rule with this id.
    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// Whom the stated rule or inferred check `id` binds (nothing for an id the catalog
    /// does not know).
    pub fn roles_of(&self, id: &str) -> &[Role] {
        self.rule(id)
            .map(|r| r.roles.as_slice())
            .or_else(|| self.inferred(id).map(|x| x.roles.as_slice()))
            .unwrap_or(&[])
    }

    /// Whether the rule or inferred check `id` binds an implementation playing `plays`: a
    /// reader is bound by what binds readers and consumers.
    pub fn binds(&self, id: &str, plays: ProtocolRole) -> bool {
        role_bound(self.roles_of(id), plays)
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

    /// The decision with this id.
    pub fn decision(&self, id: &str) -> Option<&Decision> {
        self.decisions.iter().find(|d| d.id == id)
    }

    /// The clause with this id (`ASR-221.a`), and its rule.
    pub fn clause(&self, id: &str) -> Option<(&Rule, &Clause)> {
        let (rule, _) = id.split_once('.')?;
        let rule = self.rule(rule)?;
        rule.clauses.iter().find(|c| c.id == id).map(|c| (rule, c))
    }

    /// The members whose values the spec text enumerates.
    pub fn value_sets(&self) -> &[ValueSet] {
        &self.value_sets
    }
}

/// A rule's clauses are lettered a, b, c ... after its id, in order, each one line of text;
/// only a rule checked in streams has them, since a clause is what a stream can break.
fn check_clauses(rule: &Rule) -> Result<(), CatalogError> {
    if !rule.clauses.is_empty() && !rule.checks.contains(&CheckKind::Stream) {
        return Err(CatalogError::Invalid(format!(
            "{} has clauses but is not checked in streams",
            rule.id
        )));
    }
    for (clause, letter) in rule.clauses.iter().zip('a'..='z') {
        let expected = format!("{}.{letter}", rule.id);
        if clause.id != expected {
            return Err(CatalogError::Invalid(format!(
                "{}: clause `{}` is out of place: the clauses of a rule are lettered in order, and this one is {expected}",
                rule.id, clause.id
            )));
        }
        if clause.text.trim().is_empty() || clause.text.contains('\n') {
            return Err(CatalogError::Invalid(format!(
                "{}: clause {} needs its requirement in one line",
                rule.id, clause.id
            )));
        }
    }
    if rule.clauses.len() > 26 {
        return Err(CatalogError::Invalid(format!(
            "{} has more clauses than letters",
            rule.id
        )));
    }
    Ok(())
}

/// The member notation of value sets: `type.path`, where the type is a record type, `*` or
/// `part(T)`, and each step of the path is a member name or `*`, followed by `[]` (each
/// element) or, on the last step, `{}` (the member names).
/// Whether `member` is written in the notation of [`ValueSet::member`].
pub(crate) fn is_member_path(member: &str) -> bool {
    let name = |s: &str| {
        s == "*" || (!s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
    };
    let mut steps = member.split('.');
    let first = steps.next().unwrap_or("");
    let head = match first.strip_prefix("part(") {
        Some(rest) => rest.strip_suffix(')').is_some_and(name),
        None => name(first),
    };
    let steps: Vec<&str> = steps.collect();
    head && !steps.is_empty()
        && steps.iter().enumerate().all(|(n, step)| {
            let step = step.strip_suffix("[]").unwrap_or(step);
            let step = match step.strip_suffix("{}") {
                Some(keys) if n + 1 == steps.len() => keys,
                _ => step,
            };
            name(step)
        })
}

/// How the catalog and a spec text differ.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SpecComparison {
    /// Rules the spec states that the catalog does not have.
    pub new: Vec<String>,
    /// Rules whose statement text changed: id, catalog fingerprint, spec fingerprint.
    pub changed: Vec<(String, String, String)>,
    /// Rules in the catalog that the spec no longer states.
    pub gone: Vec<String>,
    /// Rules whose requirement keywords in the spec differ from the catalog's `levels`.
    pub levels: Vec<String>,
    /// The same, with the keywords each side has: id, the catalog's, the spec's
    /// (`MUST`, `SHOULD NOT`, ... joined by `, `; `none` for a descriptive statement).
    pub level_changes: Vec<(String, String, String)>,
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
                    let stated = levels_of(&statement.text);
                    if rule.levels != stated {
                        comparison.levels.push(rule.id.clone());
                        let words = |levels: &[Level]| {
                            if levels.is_empty() {
                                "none".to_owned()
                            } else {
                                levels
                                    .iter()
                                    .map(|l| l.as_str())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            }
                        };
                        comparison.level_changes.push((
                            rule.id.clone(),
                            words(&rule.levels),
                            words(&stated),
                        ));
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

    /// `starts_in` may skip a record only when the path reaches no value in it: over every
    /// record of the corpus and every value set, a path that reaches a value starts in the
    /// record's type; and it does skip records (else it would save nothing).
    #[test]
    fn a_path_skips_only_the_records_it_reaches_nothing_in() {
        let paths: Vec<MemberPath<'_>> = Catalog::embedded()
            .value_sets()
            .iter()
            .map(ValueSet::path)
            .collect();
        let (mut reached, mut skipped) = (0, 0);
        for stream in crate::check::corpus_streams() {
            let bytes = std::fs::read(&stream).expect("a corpus stream");
            for line in bytes.split(|&b| b == b'\n') {
                let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(line) else {
                    continue;
                };
                let kind = record.get("type").and_then(Value::as_str);
                for path in &paths {
                    let starts = path.starts_in(kind);
                    if !path.values_in(&record).is_empty() {
                        assert!(starts, "{}: {} in {kind:?}", stream.display(), path.head);
                        reached += 1;
                    }
                    skipped += usize::from(!starts);
                }
            }
        }
        assert!(
            reached > 100 && skipped > 1000,
            "{reached} reached, {skipped} skipped"
        );
    }

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

    /// A catalog of one stream rule (ASR-200) and one source rule (ASR-201), with `extra`
    /// appended.
    fn small(extra: &str) -> String {
        let rule = |id: &str, checks: &str| {
            format!(
                r#"[[rule]]
id = "{id}"
file = "f"
section = "s"
levels = ["MUST"]
roles = ["producer"]
checks = ["{checks}"]
summary = "x"
fingerprint = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
"#
            )
        };
        format!(
            "cited = []\ninferred = []\n{}{}\n{extra}",
            rule("ASR-201", "source"),
            rule("ASR-200", "stream")
        )
    }

    fn clause(id: &str) -> String {
        format!("[[rule.clause]]\nid = \"{id}\"\ntext = \"A message has messageId.\"\n")
    }

    fn value_set(member: &str, values: &str, rule: &str) -> String {
        format!(
            "[[value_set]]\nmember = \"{member}\"\nvalues = {values}\nopen = true\n{rule}source = \"the text\"\n"
        )
    }

    /// What the catalog's clauses must be beyond what parsing refuses: every rule checked in
    /// streams has clauses, and no clause id is given twice.
    fn clause_problems(catalog: &Catalog) -> Vec<String> {
        let mut problems = Vec::new();
        let mut seen = BTreeSet::new();
        for rule in catalog.stream_rules() {
            if rule.clauses.is_empty() {
                problems.push(format!("{} has no clause", rule.id));
            }
        }
        for rule in &catalog.rules {
            for clause in &rule.clauses {
                if !clause.id.starts_with(&format!("{}.", rule.id)) {
                    problems.push(format!("{} does not start with {}.", clause.id, rule.id));
                }
                if !seen.insert(clause.id.as_str()) {
                    problems.push(format!("{} is given twice", clause.id));
                }
            }
        }
        problems
    }

    /// What the catalog's value sets must be: values, a source, a known rule when one is
    /// named, and a word on openness in the source (the text says it) or a note (the kit
    /// decided).
    fn value_set_problems(catalog: &Catalog) -> Vec<String> {
        let says_open = |s: &str| {
            ["open", "vendor", "MUST", "one of"]
                .iter()
                .any(|w| s.contains(w))
        };
        let mut problems = Vec::new();
        for set in catalog.value_sets() {
            if set.values.is_empty() {
                problems.push(format!("{}: no values", set.member));
            }
            if set.source.trim().is_empty() {
                problems.push(format!("{}: no source", set.member));
            }
            if set.rule.as_deref().is_some_and(|r| !catalog.knows(r)) {
                problems.push(format!("{}: an unknown rule", set.member));
            }
            if !says_open(&set.source) && set.note.is_none() {
                problems.push(format!(
                    "{}: neither the source nor a note says whether it is open",
                    set.member
                ));
            }
        }
        problems
    }

    #[test]
    fn every_stream_rule_has_clauses_with_unique_ids_under_its_own() {
        let catalog = Catalog::embedded();
        assert_eq!(clause_problems(catalog), Vec::<String>::new());
        assert!(catalog.stream_rules().count() > 30);
        for rule in &catalog.rules {
            for clause in &rule.clauses {
                let (owner, found) = catalog.clause(&clause.id).expect("found by its id");
                assert_eq!((owner.id.as_str(), found), (rule.id.as_str(), clause));
            }
        }
        let (rule, found) = catalog.clause("ASR-221.a").expect("a clause");
        assert_eq!(rule.id, "ASR-221");
        assert!(found.text.contains("planId"), "{}", found.text);
        for unknown in ["ASR-221", "ASR-221.z", "ASR-223.a", "ASR-201.a", ""] {
            assert!(catalog.clause(unknown).is_none(), "{unknown}");
        }

        let mut broken = Catalog::parse(&small(&clause("ASR-200.a"))).expect("parses");
        assert_eq!(clause_problems(&broken), Vec::<String>::new());
        let stray = broken.rules[1].clauses[0].clone();
        broken.rules[1].clauses.clear();
        assert_eq!(clause_problems(&broken), ["ASR-200 has no clause"]);
        broken.rules[1].clauses.push(stray.clone());
        broken.rules[1].clauses.push(stray.clone());
        broken.rules[0].clauses.push(stray);
        assert_eq!(
            clause_problems(&broken),
            [
                "ASR-200.a does not start with ASR-201.",
                "ASR-200.a is given twice",
                "ASR-200.a is given twice"
            ]
        );
    }

    #[test]
    fn malformed_clauses_are_refused() {
        assert!(
            Catalog::parse(&small("")).is_ok(),
            "a rule may have no clause"
        );
        let one = Catalog::parse(&small(&clause("ASR-200.a"))).expect("a good clause");
        assert_eq!(
            one.clause("ASR-200.a").map(|(r, _)| r.id.as_str()),
            Some("ASR-200")
        );
        let two = format!("{}\n{}", clause("ASR-200.a"), clause("ASR-200.b"));
        assert!(Catalog::parse(&small(&two)).is_ok());
        for (bad, why) in [
            (clause("ASR-201.a"), "out of place"),
            (clause("ASR-200-a"), "out of place"),
            (clause("ASR-200.b"), "out of place"),
            (clause("ASR-200.A"), "out of place"),
            (clause("ASR-200.aa"), "out of place"),
            (
                format!("{}\n{}", clause("ASR-200.a"), clause("ASR-200.a")),
                "out of place",
            ),
            (
                clause("ASR-200.a").replace("A message has messageId.", " "),
                "one line",
            ),
            (
                clause("ASR-200.a").replace("messageId.", "messageId.\\nAnd more."),
                "one line",
            ),
        ] {
            let err = Catalog::parse(&small(&bad)).expect_err(&bad);
            assert!(err.to_string().contains(why), "{bad}: {err}");
        }
        let on_a_source_rule = small("").replace(
            "checks = [\"source\"]\nsummary = \"x\"\nfingerprint = \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"\n",
            &format!("checks = [\"source\"]\nsummary = \"x\"\nfingerprint = \"sha256:0000000000000000000000000000000000000000000000000000000000000000\"\n{}", clause("ASR-201.a")),
        );
        let err = Catalog::parse(&on_a_source_rule).expect_err("a clause of a source rule");
        assert!(err.to_string().contains("not checked in streams"), "{err}");
        let unknown = format!("{}colour = 1\n", clause("ASR-200.a"));
        assert!(
            Catalog::parse(&small(&unknown)).is_err(),
            "deny_unknown_fields"
        );
    }

    #[test]
    fn every_value_set_has_values_a_source_and_a_known_rule() {
        let catalog = Catalog::embedded();
        assert_eq!(value_set_problems(catalog), Vec::<String>::new());
        assert!(catalog.value_sets().len() > 20);
        let set = |member: &str| {
            catalog
                .value_sets()
                .iter()
                .find(|s| s.member == member)
                .unwrap_or_else(|| panic!("no value set {member}"))
        };
        assert!(!set("message.audience").open);
        assert!(set("plan.entries[].status").open);
        assert_eq!(
            set("session.lineage.*.evidence").rule.as_deref(),
            Some("ASR-404")
        );

        let mut broken = Catalog::parse(&small(&value_set(
            "message.audience",
            "[\"user\"]",
            "rule = \"ASR-200\"\n",
        )))
        .expect("parses");
        assert_eq!(
            value_set_problems(&broken),
            ["message.audience: neither the source nor a note says whether it is open"]
        );
        broken.value_sets[0].source = "audience MUST be user".into();
        assert_eq!(value_set_problems(&broken), Vec::<String>::new());
        broken.value_sets[0].values.clear();
        broken.value_sets[0].source = " ".into();
        broken.value_sets[0].note = Some("decided".into());
        broken.value_sets[0].rule = Some("ASR-999".into());
        assert_eq!(
            value_set_problems(&broken),
            [
                "message.audience: no values",
                "message.audience: no source",
                "message.audience: an unknown rule"
            ]
        );
    }

    #[test]
    fn malformed_value_sets_are_refused() {
        let good = value_set("message.audience", "[\"user\"]", "rule = \"ASR-200\"\n");
        let catalog = Catalog::parse(&small(&good)).expect("a good value set");
        assert_eq!(catalog.value_sets()[0].values, ["user"]);
        for member in [
            "plan.entries[].status",
            "*.capture.*.state",
            "message.capture{}",
            "part(reasoning).visibility",
            "part(*).derivation.method",
        ] {
            let text = small(&value_set(member, "[\"x\"]", ""));
            assert!(Catalog::parse(&text).is_ok(), "{member}");
        }
        for (bad, why) in [
            (value_set("message.audience", "[]", ""), "needs values"),
            (
                value_set("message.audience", "[\"user\", \"user\"]", ""),
                "needs values",
            ),
            (good.replace("the text", " "), "needs the source"),
            (
                value_set("message.audience", "[\"user\"]", "rule = \"ASR-223\"\n"),
                "no stated rule",
            ),
            (format!("{good}\n{good}"), "appears twice"),
            (value_set("audience", "[\"x\"]", ""), "not a member path"),
            (value_set("message.", "[\"x\"]", ""), "not a member path"),
            (
                value_set("message.capture{}.state", "[\"x\"]", ""),
                "not a member path",
            ),
            (
                value_set("part(reasoning.visibility", "[\"x\"]", ""),
                "not a member path",
            ),
            (
                value_set("message.audience level", "[\"x\"]", ""),
                "not a member path",
            ),
        ] {
            let err = Catalog::parse(&small(&bad)).expect_err(&bad);
            assert!(err.to_string().contains(why), "{bad}: {err}");
        }
        let unknown = format!("{good}colour = 1\n");
        assert!(
            Catalog::parse(&small(&unknown)).is_err(),
            "deny_unknown_fields"
        );
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
