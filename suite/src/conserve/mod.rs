//! Conservation properties: what every conversion keeps of its source, checked from the
//! source's facts ([`crate::facts`]) on a producer's output, each broken property charged
//! to the rule it rests on. They hold of every conversion, so every producer case checks
//! them beside its fixture's own assertions:
//!
//! - texts ([`texts`]): every stored text is in the output byte for byte (ASR-211), or a
//!   `producer.lossy` entry declares its kind lost; in its own session's stream; in the
//!   source's order;
//! - ids ([`ids`]): a reasoning item with its own id is a reasoning-only message with it
//!   (ASR-219), a native message keeps its id (ASR-203, a SHOULD), a tool call keeps its
//!   call id, and a tool result answers the call it answers in the source;
//! - authors ([`authors`]): `author: "human"` only on a person's text (ASR-202), never on
//!   harness, hook or tool output (ASR-203); ASR-226's members only from the source;
//! - lineage ([`lineage`]): facets, evidence, records, root, scope, copies and `executedBy`
//!   only as the source's pointers and markers support them (ASR-402..405, 410, 414, 421).
//!
//! Where the spec in hand does not settle a property (dropping content without a `lossy`
//! entry, record order, tool records, one stream per session), the failure names the
//! catalog's decision it rests on and is non-strict.
//!
//! ```
//! use asr_suite::conserve::check;
//! use asr_suite::facts::read;
//!
//! let source = br#"{"type":"user","uuid":"u1","sessionId":"s1","isSidechain":false,"userType":"external","message":{"role":"user","content":"Fix the parser.\n"}}"#;
//! let facts = read("claude-code-jsonl", &[("s1.jsonl".to_owned(), source.to_vec())]);
//! let header = r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"claude-code"},"sessionId":"s1"}"#;
//! let kept = format!("{header}\n{}\n", r#"{"type":"message","seq":1,"id":"r1","messageId":"u1","role":"user","content":[{"type":"text","text":"Fix the parser.\n"}]}"#);
//! assert!(check(&facts, &[("", kept.as_bytes())]).is_empty());
//! let trimmed = kept.replace(r"parser.\n", "parser.");
//! let broken = check(&facts, &[("", trimmed.as_bytes())]);
//! assert_eq!(broken[0].rule, "ASR-211");
//! assert!(broken[0].message.contains("trimmed"), "{}", broken[0]);
//! ```

mod authors;
mod ids;
mod lineage;
mod output;
mod texts;

use crate::facts::{Facts, Location};
use crate::rule::{self, RuleId};

/// The decision that a text the output does not hold is declared lost.
pub const DECISION_CONTENT: &str = "content-kept";
/// The decision that the output keeps the source's order.
pub const DECISION_ORDER: &str = "source-order";
/// The decision that each session of the source is its own stream.
pub const DECISION_SESSIONS: &str = "session-streams";
/// The decision on tool calls and results: native call ids, results answering their call.
pub const DECISION_TOOLS: &str = "tool-traffic";

/// The decisions the properties rest on, each an entry of the catalog.
pub const DECISIONS: [&str; 4] = [
    DECISION_CONTENT,
    DECISION_ORDER,
    DECISION_SESSIONS,
    DECISION_TOOLS,
];

/// The rules whose properties the source `facts` give something to check: what a session
/// exercises when a producer converts it (a fuzz campaign counts them).
pub fn exercised(facts: &Facts) -> std::collections::BTreeSet<String> {
    use crate::facts::{ItemKind, TextKind};
    let mut rules = std::collections::BTreeSet::new();
    if !facts.known {
        return rules;
    }
    let texts = facts.items.iter().flat_map(|i| &i.texts);
    let mut add = |rule: RuleId| {
        rules.insert(rule.to_string());
    };
    if texts.clone().next().is_some() {
        add(rule::ASR_211);
    }
    if texts.clone().any(|t| t.kind == TextKind::Display) {
        add(rule::ASR_207);
    }
    if facts.items.iter().any(|i| i.kind == ItemKind::Message) {
        for rule in [rule::ASR_202, rule::ASR_203, rule::ASR_226] {
            add(rule);
        }
    }
    if facts
        .items
        .iter()
        .any(|i| i.kind == ItemKind::Reasoning && !i.ids.is_empty())
    {
        add(rule::ASR_219);
    }
    if !facts.sessions.is_empty() {
        for rule in [
            rule::ASR_402,
            rule::ASR_403,
            rule::ASR_410,
            rule::ASR_414,
            rule::ASR_421,
        ] {
            add(rule);
        }
    }
    let pointers = facts.sessions.iter().flat_map(|s| &s.pointers);
    if pointers.clone().next().is_some() {
        add(rule::ASR_404);
    }
    if pointers.clone().any(|p| p.meaning.is_none()) {
        add(rule::ASR_405);
    }
    rules
}

/// One property a producer's output breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The rule it rests on.
    pub rule: RuleId,
    /// The kit's decision it rests on, where the spec in hand does not settle it: the
    /// failure is non-strict.
    pub decision: Option<&'static str>,
    /// The rule broken is a SHOULD: the failure is non-strict.
    pub warning: bool,
    /// What is wrong, in one sentence.
    pub message: String,
    /// The output stream it is in, by name, when it is in one.
    pub stream: Option<String>,
    /// The source fact it rests on.
    pub fact: Option<Location>,
}

/// Every property `outputs` (stream name, bytes) break of the source `facts` describe.
/// Facts of a format the kit cannot read break nothing.
pub fn check(facts: &Facts, outputs: &[(&str, &[u8])]) -> Vec<Broken> {
    if !facts.known {
        return Vec::new();
    }
    let parsed = output::parse(outputs);
    let out = output::Output::new(facts, outputs, &parsed);
    let mut broken = Vec::new();
    let found = texts::check(facts, &out, &mut broken);
    ids::check(facts, &out, &found, &mut broken);
    authors::check(facts, &out, &mut broken);
    lineage::check(facts, &out, &mut broken);
    broken
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)?;
        if let Some(stream) = self.stream.as_deref().filter(|s| !s.is_empty()) {
            write!(f, " (in stream {stream:?})")?;
        }
        if let Some(fact) = &self.fact {
            write!(f, " [source: {fact}]")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
