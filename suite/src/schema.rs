//! The JSON Schemas of `schemas/`, compiled once, and the mapping of each schema failure
//! to the rule it breaks.
//!
//! Every schema has an `$id` under [`BASE_URI`], a name that is never fetched: all schemas
//! are compiled into the kit and resolved locally. A subschema names the rule its failures
//! break with `x-asr-rule` (and `x-asr-severity` when that is not `error`); a failure takes
//! the innermost name on its evaluation path, `$ref`s followed. The schema that holds a
//! failing keyword may word the finding with `x-asr-message` (an object keyed by keyword)
//! and point it at a member with `x-asr-pointer`.

use crate::diagnostic::{Severity, push_token};
use crate::rule::{self, RuleId};
use jsonschema::{Draft, Registry, ValidationError, Validator};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The base of every schema `$id`. The `.invalid` name cannot resolve; nothing is fetched.
pub const BASE_URI: &str = "https://asr-ctk.invalid/schemas/";

/// The record schemas, by file name, as compiled into the kit.
pub const RECORD_SCHEMAS: &[(&str, &str)] = &[
    (
        "record.schema.json",
        include_str!("../schemas/record.schema.json"),
    ),
    (
        "common.schema.json",
        include_str!("../schemas/common.schema.json"),
    ),
    (
        "session.schema.json",
        include_str!("../schemas/session.schema.json"),
    ),
    (
        "lineage.schema.json",
        include_str!("../schemas/lineage.schema.json"),
    ),
    (
        "message.schema.json",
        include_str!("../schemas/message.schema.json"),
    ),
    (
        "part.schema.json",
        include_str!("../schemas/part.schema.json"),
    ),
    (
        "plan.schema.json",
        include_str!("../schemas/plan.schema.json"),
    ),
    (
        "delivery.schema.json",
        include_str!("../schemas/delivery.schema.json"),
    ),
    (
        "subagent.schema.json",
        include_str!("../schemas/subagent.schema.json"),
    ),
    (
        "declaration.schema.json",
        include_str!("../schemas/declaration.schema.json"),
    ),
    (
        "copied-from.schema.json",
        include_str!("../schemas/copied-from.schema.json"),
    ),
];

/// The rule used for a failure under no `x-asr-rule` at all.
pub const FALLBACK_RULE: RuleId = rule::ASR_X_016;

/// One schema failure, mapped to its rule.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaFinding {
    /// The rule the failure breaks.
    pub rule: RuleId,
    /// Its weight.
    pub severity: Severity,
    /// JSON Pointer into the record; for a missing member, the member's own pointer.
    pub pointer: String,
    /// What failed.
    pub message: String,
}

/// Failure to compile the schemas.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// A schema file is not JSON.
    #[error("failed to parse schema {name}: {error}")]
    Parse {
        /// The file.
        name: String,
        /// Why (said in the message, so that it is not also the error's source).
        error: serde_json::Error,
    },
    /// The schemas do not compile.
    #[error("failed to compile the record schemas: {0}")]
    Compile(String),
    /// A schema maps failures to a rule the catalog does not have.
    #[error("failed to compile schema {name}: its x-asr-rule {rule:?} is no rule of the catalog")]
    UnknownRule {
        /// The file.
        name: String,
        /// The id it gives.
        rule: String,
    },
}

/// The compiled record schema and the documents to map failures with.
#[non_exhaustive]
pub struct Schemas {
    /// The validators over `Value`s: they word the failures of a line.
    values: Set<jsonschema::json::SerdeJson>,
    /// The same validators, reading a line's tape: they say whether it conforms, and words
    /// nothing (a line that does not is checked again as a `Value`).
    tapes: Set<crate::tape::Tape>,
    documents: HashMap<String, Value>,
    /// The annotation found for each evaluation path failures have had (up to
    /// [`MAX_ANNOTATIONS`]): a path is a place in the schemas, and a stream with many failing
    /// lines fails at the same few.
    annotations: Mutex<HashMap<Box<str>, Annotation>>,
}

/// The validators of one set, over one kind of value, each compiled the first time it is
/// asked for: a run reads a few of the record types, and compiling them all was a third of
/// the time a run on a small stream took.
struct Set<F: jsonschema::json::Json> {
    registry: Registry<'static>,
    /// The record schema's.
    whole: Lazy<F>,
    /// For each record type the record schema dispatches on, the schema a record of that
    /// type meets: the record schema's own constraints and that type's schema, with no
    /// dispatch to evaluate. It decides validity; the record schema words the failures.
    by_type: HashMap<String, Lazy<F>>,
    /// The record schema without its dispatch by type: what every record meets, whatever its
    /// type. Its failures have the record schema's evaluation paths.
    untyped: Lazy<F>,
}

/// A schema and its validator, once compiled.
struct Lazy<F: jsonschema::json::Json> {
    schema: Value,
    compiled: OnceLock<Validator<F>>,
}

impl std::fmt::Debug for Schemas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schemas")
            .field("documents", &self.documents.len())
            .finish_non_exhaustive()
    }
}

impl Schemas {
    /// The schemas compiled into the kit, compiled once.
    pub fn embedded() -> &'static Schemas {
        static SCHEMAS: OnceLock<Schemas> = OnceLock::new();
        SCHEMAS.get_or_init(|| {
            Schemas::prepare(RECORD_SCHEMAS)
                .unwrap_or_else(|e| panic!("the embedded schemas are broken: {e}"))
        })
    }

    /// Reads a set of schemas (file name, text; the first is the record schema), each
    /// validator compiled when it is first used. For schemas known to compile: a schema that
    /// does not compile panics then ([`Schemas::compile`] says so at once).
    fn prepare(files: &[(&str, &str)]) -> Result<Schemas, SchemaError> {
        let mut documents = HashMap::new();
        for (name, text) in files {
            let value: Value = serde_json::from_str(text).map_err(|source| SchemaError::Parse {
                name: (*name).to_owned(),
                error: source,
            })?;
            if let Some(rule) = unknown_rule(&value) {
                return Err(SchemaError::UnknownRule {
                    name: (*name).to_owned(),
                    rule,
                });
            }
            documents.insert(format!("{BASE_URI}{name}"), value);
        }
        let root_uri = format!("{BASE_URI}{}", files.first().map_or("", |f| f.0));
        let root = documents
            .get(&root_uri)
            .ok_or_else(|| SchemaError::Compile("no record schema given".into()))?;
        let prepare = |rewrite: fn(&Value) -> Option<Value>| {
            let mut registry = Registry::new();
            for (uri, value) in &documents {
                if *uri != root_uri {
                    let value = rewrite(value).unwrap_or_else(|| value.clone());
                    registry = registry
                        .add(uri.as_str(), value)
                        .map_err(|e| SchemaError::Compile(e.to_string()))?;
                }
            }
            registry
                .prepare()
                .map_err(|e| SchemaError::Compile(e.to_string()))
        };
        let by_kind = per_type(root, &root_uri);
        let untyped = untyped(root);
        let schemas = Schemas {
            values: Set::new(prepare(|_| None)?, root, &by_kind, &untyped),
            // The tape's validators only say whether a line conforms, never why: they may
            // read schemas rewritten to say the same at less cost.
            tapes: Set::new(prepare(dispatch_first)?, root, &by_kind, &untyped),
            documents,
            annotations: Mutex::default(),
        };
        Ok(schemas)
    }

    /// Compiles a set of schemas (file name, text; the first is the record schema), every
    /// validator at once: an error says which does not compile.
    pub fn compile(files: &[(&str, &str)]) -> Result<Schemas, SchemaError> {
        let schemas = Schemas::prepare(files)?;
        // The two sets on two threads: compiling is most of the time a run of a few files
        // takes, on one thread or many.
        std::thread::scope(|scope| {
            let tapes = scope.spawn(|| schemas.tapes.compile_all());
            let values = schemas.values.compile_all();
            let tapes = tapes
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            values.and(tapes)
        })?;
        Ok(schemas)
    }

    /// Whether a record of type `kind`, read as a tape, conforms to the record schema (as
    /// [`Schemas::check`] holds it).
    pub(crate) fn tape_conforms(&self, kind: &str, record: crate::tape::Node<'_>) -> bool {
        self.tapes.of_type(kind).is_valid(record)
    }

    /// Whether a record read as a tape meets what every record meets, whatever its type.
    pub(crate) fn tape_conforms_untyped(&self, record: crate::tape::Node<'_>) -> bool {
        self.tapes.untyped().is_valid(record)
    }

    /// Checks one record as a record of a type the schemas do not know: the members every
    /// record has, and nothing its type would ask (a `session` line that is not the header).
    pub fn check_untyped(&self, record: &Value) -> Vec<SchemaFinding> {
        let untyped = self.values.untyped();
        self.findings(untyped, || untyped, record)
    }

    /// Checks one record; no findings when it conforms.
    pub fn check(&self, record: &Value) -> Vec<SchemaFinding> {
        let kind = record.get("type").and_then(Value::as_str).unwrap_or("");
        self.findings(self.values.of_type(kind), || self.values.whole(), record)
    }

    /// No findings when `quick` (the schema of the record's type, or the same as `full`)
    /// holds; else the findings of `full`, bounded as a line's findings are.
    fn findings<'a>(
        &'a self,
        quick: &Validator,
        full: impl FnOnce() -> &'a Validator,
        record: &Value,
    ) -> Vec<SchemaFinding> {
        if quick.is_valid(record) {
            return Vec::new();
        }
        let mut findings: Vec<SchemaFinding> = full()
            .iter_errors(record)
            .take(crate::diagnostic::MAX_PER_LINE + 1)
            .map(|e| self.map(&e))
            .collect();
        findings.dedup();
        findings
    }

    fn map(&self, error: &ValidationError<'_>) -> SchemaFinding {
        let annotation = self.annotation_at(error.evaluation_path().as_str());
        let mut pointer = error.instance_path().as_str().to_owned();
        if let Some(token) = &annotation.pointer {
            push_token(&mut pointer, token);
        }
        let message = match error.kind() {
            jsonschema::error::ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                push_token(&mut pointer, name);
                format!("`{name}` is missing")
            }
            _ => annotation
                .message
                .unwrap_or_else(|| short(&error.to_string())),
        };
        SchemaFinding {
            rule: annotation.rule,
            severity: annotation.severity,
            pointer,
            message,
        }
    }

    /// [`Schemas::annotation`], found once for each path.
    fn annotation_at(&self, evaluation_path: &str) -> Annotation {
        // A poisoned lock only means another thread panicked while it held it; the map is
        // whole whatever the panic, for an entry is inserted in one call.
        let lock = || {
            self.annotations
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(found) = lock().get(evaluation_path) {
            return found.clone();
        }
        let found = self.annotation(evaluation_path);
        let mut remembered = lock();
        // A schema that refers to itself has a path for each depth an instance reaches:
        // what is remembered is bounded whatever the input.
        if remembered.len() < MAX_ANNOTATIONS {
            remembered.insert(evaluation_path.into(), found.clone());
        }
        found
    }

    /// The innermost rule annotation on an evaluation path, `$ref`s followed, and the
    /// message and pointer that the schema holding the failing keyword gives for it.
    fn annotation(&self, evaluation_path: &str) -> Annotation {
        let mut found = Annotation {
            rule: FALLBACK_RULE,
            severity: Severity::Error,
            message: None,
            pointer: None,
        };
        let Some(root) = self
            .documents
            .keys()
            .find(|k| k.ends_with("/record.schema.json"))
        else {
            return found;
        };
        let mut base = root.clone();
        let mut node = &self.documents[root];
        found.take(node);
        let tokens: Vec<String> = evaluation_path
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        for (index, token) in tokens.iter().enumerate() {
            if index + 1 == tokens.len() {
                // The last token is the failing keyword; `node` is the schema that holds it.
                found.message = node
                    .get("x-asr-message")
                    .and_then(|m| m.get(token))
                    .and_then(Value::as_str)
                    .map(str::to_owned);
                found.pointer = node
                    .get("x-asr-pointer")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            let next = if token == "$ref" {
                let Some(reference) = node.get("$ref").and_then(Value::as_str) else {
                    break;
                };
                let (document, fragment) = reference.split_once('#').unwrap_or((reference, ""));
                if !document.is_empty() {
                    base = format!("{BASE_URI}{document}");
                }
                self.documents.get(&base).and_then(|d| d.pointer(fragment))
            } else {
                match node {
                    Value::Object(map) => map.get(token),
                    Value::Array(items) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
                    _ => None,
                }
            };
            let Some(next) = next else { break };
            node = next;
            found.take(node);
        }
        found
    }
}

/// The most evaluation paths [`Schemas`] remembers the annotation of.
const MAX_ANNOTATIONS: usize = 4096;

impl<F: jsonschema::json::Json> Set<F> {
    fn new(
        registry: Registry<'static>,
        root: &Value,
        by_type: &[(String, Value)],
        untyped: &Value,
    ) -> Self {
        Set {
            registry,
            whole: Lazy::new(root.clone()),
            by_type: by_type
                .iter()
                .map(|(kind, schema)| (kind.clone(), Lazy::new(schema.clone())))
                .collect(),
            untyped: Lazy::new(untyped.clone()),
        }
    }

    /// The record schema's validator.
    fn whole(&self) -> &Validator<F> {
        self.whole.get(&self.registry)
    }

    /// The validator of a record of type `kind`: its type's, or the record schema's for a
    /// type it does not dispatch on.
    fn of_type(&self, kind: &str) -> &Validator<F> {
        self.by_type
            .get(kind)
            .map_or_else(|| self.whole(), |lazy| lazy.get(&self.registry))
    }

    fn untyped(&self) -> &Validator<F> {
        self.untyped.get(&self.registry)
    }

    /// Compiles every validator of the set not compiled yet.
    fn compile_all(&self) -> Result<(), SchemaError> {
        let every = std::iter::once(&self.whole)
            .chain(self.by_type.values())
            .chain(std::iter::once(&self.untyped));
        for lazy in every {
            if lazy.compiled.get().is_none() {
                let _ = lazy.compiled.set(build(&self.registry, &lazy.schema)?);
            }
        }
        Ok(())
    }
}

impl<F: jsonschema::json::Json> Lazy<F> {
    fn new(schema: Value) -> Self {
        Lazy {
            schema,
            compiled: OnceLock::new(),
        }
    }

    fn get(&self, registry: &Registry<'static>) -> &Validator<F> {
        self.compiled.get_or_init(|| {
            build(registry, &self.schema)
                .unwrap_or_else(|e| panic!("a schema known to compile did not: {e}"))
        })
    }
}

fn build<F: jsonschema::json::Json>(
    registry: &Registry<'static>,
    schema: &Value,
) -> Result<Validator<F>, SchemaError> {
    jsonschema::options_for::<F>()
        .with_draft(Draft::Draft202012)
        .with_registry(registry)
        .build(schema)
        .map_err(|e| SchemaError::Compile(e.to_string()))
}

/// For each `if {type: const T} then {$ref: R}` of the record schema's `allOf`, the schema of
/// a record of type T: every other constraint of the record schema (its `allOf` entries
/// without `if`, and its own keywords) and R. A record of type T meets it exactly when it
/// meets the record schema, for no other dispatch applies to it.
fn per_type(root: &Value, root_uri: &str) -> Vec<(String, Value)> {
    let Some(entries) = root.get("allOf").and_then(Value::as_array) else {
        return Vec::new();
    };
    let base: Vec<&Value> = entries.iter().filter(|e| e.get("if").is_none()).collect();
    let mut own = root.as_object().cloned().unwrap_or_default();
    own.remove("allOf");
    let mut out = Vec::new();
    for entry in entries {
        let kind = entry
            .pointer("/if/properties/type/const")
            .and_then(Value::as_str);
        let target = entry.pointer("/then/$ref").and_then(Value::as_str);
        let (Some(kind), Some(target)) = (kind, target) else {
            continue;
        };
        let mut schema = own.clone();
        // Its own name beside the record schema's, so that relative references resolve alike.
        let base_uri = root_uri.rsplit_once('/').map_or("", |(dir, _)| dir);
        schema.insert(
            "$id".into(),
            Value::String(format!("{base_uri}/record-{kind}.schema.json")),
        );
        let mut all: Vec<Value> = base.iter().map(|e| (*e).clone()).collect();
        all.push(serde_json::json!({"$ref": target}));
        schema.insert("allOf".into(), Value::Array(all));
        out.push((kind.to_owned(), Value::Object(schema)));
    }
    out
}

/// A schema document whose `allOf` dispatches by the `type` member (entries of only `if` and
/// `then`, each `if` of the form `{"type": "object", "required": ["type"], "properties":
/// {"type": {"const": ...}}}` or with an `enum` of strings, no value in two), rewritten so
/// that the dispatch stops at the entry of the instance's type: its `if`/`then` entries
/// become one `anyOf` of `allOf: [if, then]` for each, and of `not: {anyOf: [every if]}`.
/// An instance meets the one exactly when it meets the other: at most one `if` holds, and
/// when one does only its branch can; when none does, the `then`s do not apply, and the
/// last branch holds. `None` for any other document.
fn dispatch_first(document: &Value) -> Option<Value> {
    let entries = document.get("allOf")?.as_array()?;
    let mut kept = Vec::new();
    let mut conditions = Vec::new();
    let mut branches = Vec::new();
    let mut values: Vec<&str> = Vec::new();
    for entry in entries {
        let Some(condition) = entry.get("if") else {
            kept.push(entry.clone());
            continue;
        };
        let then = entry.get("then")?;
        if entry.as_object()?.len() != 2 {
            return None;
        }
        for value in type_values(condition)? {
            if values.contains(&value) {
                return None;
            }
            values.push(value);
        }
        conditions.push(condition.clone());
        branches.push(serde_json::json!({"allOf": [condition, then]}));
    }
    if conditions.len() < 2 {
        return None;
    }
    branches.push(serde_json::json!({"not": {"anyOf": conditions}}));
    kept.push(serde_json::json!({"anyOf": branches}));
    let mut rewritten = document.as_object()?.clone();
    rewritten.insert("allOf".into(), Value::Array(kept));
    Some(Value::Object(rewritten))
}

/// The values of `type` for which an `if` of [`dispatch_first`]'s form holds.
fn type_values(condition: &Value) -> Option<Vec<&str>> {
    let condition = condition.as_object()?;
    let required = condition.get("required")?.as_array()?;
    let properties = condition.get("properties")?.as_object()?;
    let member = properties.get("type")?.as_object()?;
    let shaped = condition.len() == 3
        && condition.get("type")? == "object"
        && required.iter().any(|name| name == "type")
        && properties.len() == 1
        && member.len() == 1;
    if !shaped {
        return None;
    }
    match (member.get("const"), member.get("enum")) {
        (Some(value), None) => Some(vec![value.as_str()?]),
        (None, Some(Value::Array(values))) => values.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

/// The record schema without its dispatch by type: its own keywords and the `allOf` entries
/// before the first `if`, at the same indices, so that failures map as the record schema's.
fn untyped(root: &Value) -> Value {
    let mut schema = root.as_object().cloned().unwrap_or_default();
    let base: Vec<Value> = root
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .take_while(|e| e.get("if").is_none())
        .cloned()
        .collect();
    schema.insert("allOf".into(), Value::Array(base));
    Value::Object(schema)
}

/// The first `x-asr-rule` in a schema document that is no rule of the catalog.
fn unknown_rule(node: &Value) -> Option<String> {
    match node {
        Value::Object(map) => map
            .get("x-asr-rule")
            .and_then(Value::as_str)
            .filter(|r| RuleId::known(r).is_none())
            .map(str::to_owned)
            .or_else(|| map.values().find_map(unknown_rule)),
        Value::Array(items) => items.iter().find_map(unknown_rule),
        _ => None,
    }
}

#[derive(Clone, Debug, PartialEq)]
struct Annotation {
    rule: RuleId,
    severity: Severity,
    message: Option<String>,
    pointer: Option<String>,
}

impl Annotation {
    fn take(&mut self, node: &Value) {
        // `compile` refused every schema that names a rule the catalog does not have.
        if let Some(rule) = node
            .get("x-asr-rule")
            .and_then(Value::as_str)
            .and_then(RuleId::known)
        {
            self.rule = rule;
            self.severity = match node.get("x-asr-severity").and_then(Value::as_str) {
                Some("warning") => Severity::Warning,
                Some("notice") => Severity::Notice,
                _ => Severity::Error,
            };
        }
    }
}

/// A schema library message cut to a readable length (it may quote a huge instance).
fn short(text: &str) -> String {
    const MAX: usize = 240;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The part schema with its dispatch rewritten holds every part as the part schema does:
    /// every part of the corpus, each with its type changed to every type the schema knows
    /// and to one it does not, each with one member taken away, and values that are no
    /// object.
    #[test]
    fn a_dispatch_rewritten_holds_what_the_schema_holds() {
        let name = "part.schema.json";
        let text = RECORD_SCHEMAS
            .iter()
            .find(|(file, _)| *file == name)
            .expect("the part schema")
            .1;
        let part: Value = serde_json::from_str(text).expect("JSON");
        let rewritten = dispatch_first(&part).expect("the part schema dispatches by type");
        let documents: Vec<(String, Value)> = RECORD_SCHEMAS
            .iter()
            .map(|(file, text)| {
                let value = serde_json::from_str(text).expect("JSON");
                (format!("{BASE_URI}{file}"), value)
            })
            .collect();
        let registry = documents
            .iter()
            .try_fold(Registry::new(), |registry, (uri, value)| {
                registry.add(uri.as_str(), value.clone())
            })
            .and_then(jsonschema::RegistryBuilder::prepare)
            .expect("the schemas");
        let build = |schema: &Value| {
            jsonschema::options()
                .with_draft(Draft::Draft202012)
                .with_registry(&registry)
                .build(schema)
                .expect("a schema")
        };
        let (before, after) = (build(&part), build(&rewritten));
        let types: Vec<&str> = part["allOf"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| type_values(entry.get("if")?))
            .flatten()
            .collect();
        assert_eq!(types.len(), 9, "{types:?}");
        let mut instances: Vec<Value> = vec![
            json!(null),
            json!("text"),
            json!(3),
            json!([]),
            json!({}),
            json!({"type": 1}),
        ];
        for stream in crate::check::corpus_streams() {
            let bytes = std::fs::read(&stream).expect("a corpus stream");
            for line in bytes.split(|&b| b == b'\n') {
                let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(line) else {
                    continue;
                };
                for member in ["content", "displayContent"] {
                    if let Some(Value::Array(parts)) = record.get(member) {
                        instances.extend(parts.iter().cloned());
                    }
                }
            }
        }
        let found = instances.len();
        for at in 6..found {
            let Value::Object(one) = instances[at].clone() else {
                continue;
            };
            for kind in types.iter().chain(&["no-such-type"]) {
                let mut changed = one.clone();
                changed.insert("type".into(), json!(kind));
                instances.push(Value::Object(changed));
            }
            for name in one.keys() {
                let mut fewer = one.clone();
                fewer.remove(name);
                instances.push(Value::Object(fewer));
            }
        }
        let mut valid = 0;
        for instance in &instances {
            let holds = before.is_valid(instance);
            assert_eq!(holds, after.is_valid(instance), "{instance}");
            valid += usize::from(holds);
        }
        assert!(found > 300, "{found} parts");
        assert!(
            valid > 100 && valid < instances.len() - 100,
            "{valid} of {}",
            instances.len()
        );
    }

    #[test]
    fn only_a_dispatch_of_disjoint_types_is_rewritten() {
        let condition = |values: Value| json!({"type": "object", "required": ["type"], "properties": {"type": values}});
        let of = |first: Value, second: Value| {
            json!({"allOf": [
                {"if": condition(first), "then": {"required": ["a"]}},
                {"if": condition(second), "then": {"required": ["b"]}}
            ]})
        };
        assert!(dispatch_first(&of(json!({"const": "x"}), json!({"enum": ["y", "z"]}))).is_some());
        // Two entries for one type: both apply, which a first match would not say.
        assert!(dispatch_first(&of(json!({"const": "x"}), json!({"enum": ["x", "z"]}))).is_none());
        // An `if` that holds for what is no object would hold beside any other.
        let loose = json!({"allOf": [
            {"if": {"properties": {"type": {"const": "x"}}}, "then": {"required": ["a"]}},
            {"if": condition(json!({"const": "y"})), "then": {"required": ["b"]}}
        ]});
        assert!(dispatch_first(&loose).is_none());
        let with_else = json!({"allOf": [
            {"if": condition(json!({"const": "x"})), "then": {}, "else": {"required": ["a"]}},
            {"if": condition(json!({"const": "y"})), "then": {}}
        ]});
        assert!(dispatch_first(&with_else).is_none());
    }

    /// Every line of the corpus that is JSON, with the name of its case.
    fn corpus_lines() -> Vec<(String, Value)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let cases = crate::case::load_corpus(&root).expect("the corpus");
        let mut lines = Vec::new();
        for case in &cases {
            for (_, path) in &case.streams {
                let text = std::fs::read(path).expect("a stream");
                for line in crate::lines::split(&text).bytes() {
                    if let Ok(value) = serde_json::from_slice::<Value>(line) {
                        lines.push((case.name.clone(), value));
                    }
                }
            }
        }
        lines
    }

    /// Which validators of a set are compiled, by name.
    fn compiled<F: jsonschema::json::Json>(set: &Set<F>) -> Vec<String> {
        let mut names: Vec<String> = set
            .by_type
            .iter()
            .filter(|(_, lazy)| lazy.compiled.get().is_some())
            .map(|(kind, _)| kind.clone())
            .collect();
        names.sort();
        for (name, lazy) in [("(whole)", &set.whole), ("(untyped)", &set.untyped)] {
            if lazy.compiled.get().is_some() {
                names.push(name.into());
            }
        }
        names
    }

    /// A run compiles the validators of the record types it reads, when it first reads one:
    /// a valid message compiles the message's validator alone, and an invalid one the
    /// record schema's too, which words its failures. Compiling them all at once compiles
    /// every one.
    #[test]
    fn validators_are_compiled_when_first_needed_or_all_at_once() {
        let schemas = Schemas::prepare(RECORD_SCHEMAS).expect("the schemas");
        assert!(compiled(&schemas.values).is_empty());
        assert!(compiled(&schemas.tapes).is_empty());
        let lines = corpus_lines();
        let message = |valid: bool| {
            lines
                .iter()
                .map(|(_, value)| value)
                .find(|v| {
                    v.get("type") == Some(&json!("message"))
                        && Schemas::embedded().check(v).is_empty() == valid
                })
                .expect("a message line")
        };
        assert!(schemas.check(message(true)).is_empty());
        assert_eq!(compiled(&schemas.values), ["message"]);
        assert!(!schemas.check(message(false)).is_empty());
        assert_eq!(compiled(&schemas.values), ["message", "(whole)"]);
        assert!(compiled(&schemas.tapes).is_empty());

        let whole = Schemas::compile(RECORD_SCHEMAS).expect("the schemas compile");
        for set in [compiled(&whole.values), compiled(&whole.tapes)] {
            assert_eq!(set.len(), whole.values.by_type.len() + 2, "{set:?}");
        }
    }

    /// A schema that does not compile is an error of [`Schemas::compile`], whichever record
    /// type it is the schema of, not a panic when the first record of that type is read.
    #[test]
    fn a_schema_that_does_not_compile_is_an_error_at_once() {
        for broken in ["plan.schema.json", "copied-from.schema.json"] {
            let mut files = RECORD_SCHEMAS.to_vec();
            let at = files
                .iter()
                .position(|(name, _)| *name == broken)
                .expect(broken);
            let text: Value = serde_json::from_str(files[at].1).expect("JSON");
            let mut text = text.as_object().expect("an object").clone();
            text.insert("minLength".into(), json!("not a number"));
            let text = Value::Object(text).to_string();
            files[at].1 = &text;
            assert!(
                Schemas::prepare(&files).is_ok(),
                "{broken}: read, not compiled"
            );
            let error = Schemas::compile(&files).expect_err(broken);
            assert!(
                matches!(error, SchemaError::Compile(_)),
                "{broken}: {error}"
            );
        }
    }

    #[test]
    fn the_schema_of_a_type_decides_as_the_record_schema_does_on_every_corpus_line() {
        let schemas = Schemas::embedded();
        let by_type = &schemas.values.by_type;
        assert!(by_type.len() >= 6, "{:?}", by_type.keys());
        let (mut lines, mut invalid) = (0, 0);
        for (case, value) in corpus_lines() {
            let Some(fast) = value
                .get("type")
                .and_then(Value::as_str)
                .and_then(|k| by_type.get(k))
            else {
                continue;
            };
            lines += 1;
            let whole = schemas.values.whole().is_valid(&value);
            invalid += usize::from(!whole);
            let fast = fast.get(&schemas.values.registry).is_valid(&value);
            assert_eq!(fast, whole, "{case}: {value}");
        }
        assert!(
            lines > 1000 && invalid > 50,
            "{lines} lines, {invalid} invalid"
        );
    }

    #[test]
    fn what_is_remembered_of_annotations_is_bounded_and_past_the_bound_still_found() {
        let schemas = Schemas::embedded();
        for n in 0..MAX_ANNOTATIONS + 100 {
            let path = format!("/allOf/{}/properties/x{n}/type", n % 5);
            assert_eq!(
                schemas.annotation_at(&path),
                schemas.annotation(&path),
                "{path}"
            );
        }
        let remembered = schemas
            .annotations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len();
        assert_eq!(remembered, MAX_ANNOTATIONS);
    }

    #[test]
    fn an_annotation_remembered_is_the_one_found_anew_for_every_failure_of_the_corpus() {
        let schemas = Schemas::embedded();
        let mut paths = std::collections::BTreeSet::new();
        for (_, value) in corpus_lines() {
            for error in schemas.values.whole().iter_errors(&value) {
                paths.insert(error.evaluation_path().as_str().to_owned());
            }
        }
        // Twice over, so the second pass reads each from memory, in another order.
        for path in paths.iter().chain(paths.iter().rev()) {
            assert_eq!(
                schemas.annotation_at(path),
                schemas.annotation(path),
                "{path}"
            );
        }
        let rules: std::collections::BTreeSet<_> = paths
            .iter()
            .map(|p| schemas.annotation_at(p).rule)
            .collect();
        assert!(
            paths.len() > 50 && rules.len() > 20,
            "{} paths, {} rules",
            paths.len(),
            rules.len()
        );
    }

    fn rules(record: &Value) -> Vec<(String, String)> {
        Schemas::embedded()
            .check(record)
            .into_iter()
            .map(|f| (f.rule.as_str().to_owned(), f.pointer))
            .collect()
    }

    fn message(extra: &Value) -> Value {
        let mut base = json!({"type": "message", "seq": 1, "id": "r1", "messageId": "m", "role": "user",
            "content": [{"type": "text", "text": "hi"}]});
        for (k, v) in extra.as_object().expect("object") {
            base[k] = v.clone();
        }
        base
    }

    #[test]
    fn a_conforming_message_has_no_finding() {
        assert!(rules(&message(&json!({}))).is_empty());
    }

    #[test]
    fn failures_map_to_their_rules_through_refs() {
        let image = message(
            &json!({"content": [{"type": "image", "data": "AA==", "blob": {"blob": "sha256:x"}}]}),
        );
        let found = rules(&image);
        assert!(
            found.contains(&("ASR-212".into(), "/content/0/mimeType".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&("ASR-212".into(), "/content/0".into())),
            "{found:?}"
        );
        assert_eq!(
            rules(&message(&json!({"audience": "everyone"}))),
            [("ASR-204".into(), "/audience".into())]
        );
        let part = message(&json!({"content": [{"type": "text", "text": "x", "author": 5}]}));
        assert_eq!(
            rules(&part),
            [("ASR-224".into(), "/content/0/author".into())]
        );
        let not_object = message(&json!({"content": ["text"]}));
        assert_eq!(
            rules(&not_object),
            [("ASR-210".into(), "/content/0".into())]
        );
    }

    #[test]
    fn unannotated_failures_fall_back_to_member_types() {
        assert_eq!(
            rules(&message(&json!({"triggersTurn": "yes"}))),
            [(FALLBACK_RULE.as_str().into(), "/triggersTurn".into())]
        );
    }

    #[test]
    fn lineage_failures_name_lineage_rules() {
        let header = json!({"type": "session", "seq": 0, "id": "h", "formatVersion": "0.1",
            "agent": {"name": "codex"}, "sessionId": "s",
            "lineage": {"root": true, "spawnedBy": {"session": "codex:p", "evidence": "native_field"}}});
        assert_eq!(rules(&header), [("ASR-402".into(), "/lineage".into())]);
        let mut bad_evidence = header.clone();
        bad_evidence["lineage"] =
            json!({"spawnedBy": {"session": "codex:p#r1", "evidence": "hunch"}});
        let found = rules(&bad_evidence);
        assert!(
            found.contains(&("ASR-404".into(), "/lineage/spawnedBy/evidence".into())),
            "{found:?}"
        );
        assert!(
            found.contains(&("ASR-400".into(), "/lineage/spawnedBy/session".into())),
            "{found:?}"
        );
    }

    #[test]
    fn warnings_carry_their_severity() {
        let header = json!({"type": "session", "seq": 0, "id": "h"});
        let findings = Schemas::embedded().check(&header);
        assert!(!findings.is_empty());
        assert!(
            findings
                .iter()
                .all(|f| f.rule == "ASR-X-018" && f.severity == Severity::Warning),
            "{findings:?}"
        );
    }

    #[test]
    fn long_messages_are_cut() {
        let long = "x".repeat(10_000);
        assert!(short(&long).len() < 300);
        assert_eq!(short("é"), "é");
    }
}
