//! OpenClaw's session store (`sessions.json`): session keys mapped to entries, which carry
//! the pointers between sessions (`parentSessionKey`, `spawnedBy`, `forkedFromParent`).

use super::super::{Facts, Location, Pointer, Relation};
use serde_json::{Map, Value};

/// Whether `value` is a session store: an object of entries, some naming a `sessionId`.
pub(super) fn is_store(value: &Value) -> bool {
    value.as_object().is_some_and(|entries| {
        entries
            .values()
            .any(|e| e.get("sessionId").is_some_and(Value::is_string))
    })
}

/// Reads the store `value` of `file`: the pointers of each entry whose session the files
/// hold a transcript of. An entry of a session the files do not hold gives no session (it
/// would have no stream), only a target of the other entries' pointers.
pub(super) fn read(file: &str, value: &Value, facts: &mut Facts) {
    let Some(entries) = value.as_object() else {
        facts.unknown.push(Location::file(file, ""));
        return;
    };
    for (key, entry) in entries {
        let Some(entry) = entry.as_object() else {
            continue;
        };
        let Some(id) = entry.get("sessionId").and_then(Value::as_str) else {
            continue;
        };
        let Some(s) = facts
            .sessions
            .iter()
            .position(|s| s.id == id || s.aliases.iter().any(|a| a == id))
        else {
            continue;
        };
        let at = Location::file(file, format!("/{}", escape(key)));
        let spawned_by = entry.get("spawnedBy").and_then(Value::as_str);
        if let Some(parent) = spawned_by
            && let Some(to) = target(entries, parent)
        {
            facts.sessions[s].pointers.push(Pointer {
                to,
                meaning: Some(Relation::SpawnedBy),
                record: None,
                evidence: "native_field".to_owned(),
                at: at.at("/spawnedBy"),
            });
        }
        // A subagent's entry is marked by spawnedBy or its role; a parent key alone is a
        // thread's or a topic's as well (ASR-410).
        if spawned_by.is_some() || entry.contains_key("subagentRole") {
            facts.sessions[s].scope = Some("subagent".to_owned());
        }
        if let Some(parent) = entry.get("parentSessionKey").and_then(Value::as_str)
            && spawned_by != Some(parent)
            && let Some(to) = target(entries, parent)
        {
            // parentSessionKey names the parent and says nothing of the relation; only
            // forkedFromParent records a fork of its transcript (ASR-405).
            let forked = entry
                .get("forkedFromParent")
                .is_some_and(|f| f.as_bool() == Some(true));
            facts.sessions[s].pointers.push(Pointer {
                to,
                meaning: forked.then_some(Relation::ForkedFrom),
                record: None,
                evidence: "native_field".to_owned(),
                at: at.at("/parentSessionKey"),
            });
        }
    }
}

/// The session reference of the store entry under `key`.
fn target(entries: &Map<String, Value>, key: &str) -> Option<String> {
    let id = entries.get(key)?.get("sessionId")?.as_str()?;
    (!id.is_empty()).then(|| format!("openclaw:{id}"))
}

/// `key` as a JSON Pointer token.
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}
