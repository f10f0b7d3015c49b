//! Wrong producers: each the right output (a fixture's golden) with one realistic mistake a
//! converter author makes, applied the same way to every fixture. Each must fail, under the
//! rule it breaks, on every fixture whose output the mistake changes: the conservation
//! properties catch a mistake wherever it shows, not only where a fixture was written for it.

#![expect(
    clippy::ptr_arg,
    reason = "every mistake has the one signature of Wrong::make: some drop whole streams"
)]

use asr_suite::facts::{Facts, ItemKind};
use serde_json::{Map, Value, json};
use unicode_normalization::UnicodeNormalization;

/// One output stream: its name and its records.
pub type Stream = (String, Vec<Map<String, Value>>);

/// A wrong producer.
pub struct Wrong {
    /// Its name, for the test's name.
    pub name: &'static str,
    /// The rules it breaks: its output must fail under one of them.
    pub rules: &'static [&'static str],
    /// The failure is a hard one (no decision of the kit, no SHOULD), on a stable fixture.
    pub hard: bool,
    /// The mistake, made on the golden streams of a source with these facts (a mistake
    /// about native ids or markers is made where the source has them).
    pub make: fn(&mut Vec<Stream>, &Facts),
}

/// Every wrong producer.
pub fn all() -> Vec<Wrong> {
    vec![
        Wrong {
            name: "drops_every_tool_result",
            rules: &["ASR-211"],
            hard: false,
            make: |s, _| drop_tool_results(s),
        },
        Wrong {
            name: "writes_the_record_id_as_call_id",
            rules: &["ASR-203"],
            hard: false,
            make: |s, _| call_ids_from_record_ids(s),
        },
        Wrong {
            name: "pairs_results_with_the_wrong_call",
            rules: &["ASR-211"],
            hard: false,
            make: |s, _| rotate_result_calls(s),
        },
        Wrong {
            name: "turns_newlines_in_tool_output_into_spaces",
            rules: &["ASR-211"],
            hard: true,
            make: |s, _| tool_output_newlines(s),
        },
        Wrong {
            name: "orders_records_by_timestamp",
            rules: &["ASR-211"],
            hard: false,
            make: |s, _| sort_by_ts(s),
        },
        Wrong {
            name: "writes_results_before_their_calls",
            rules: &["ASR-211"],
            hard: false,
            make: |s, _| results_first(s),
        },
        Wrong {
            name: "drops_the_sidechains",
            rules: &["ASR-211", "ASR-410"],
            hard: false,
            make: |s, _| drop_sidechains(s),
        },
        Wrong {
            name: "folds_sidechains_into_the_parent",
            rules: &["ASR-410"],
            hard: false,
            make: |s, _| fold_sidechains(s),
        },
        Wrong {
            name: "marks_a_sidechains_prompts_human",
            rules: &["ASR-202", "ASR-203"],
            hard: true,
            make: |s, _| sidechain_human(s),
        },
        Wrong {
            name: "links_a_sidechain_to_its_call_by_prompt_text",
            rules: &["ASR-403"],
            hard: true,
            make: |s, _| link_by_prompt(s),
        },
        Wrong {
            name: "claims_root_on_every_header",
            rules: &["ASR-402"],
            hard: true,
            make: |s, _| root_everywhere(s),
        },
        Wrong {
            name: "writes_the_model_as_executed_by",
            rules: &["ASR-421"],
            hard: true,
            make: |s, _| executed_by_model(s),
        },
        Wrong {
            name: "folds_reasoning_items_into_the_next_message",
            rules: &["ASR-219"],
            hard: true,
            make: fold_reasoning,
        },
        Wrong {
            name: "normalises_texts_to_nfkc",
            rules: &["ASR-211"],
            hard: true,
            make: |s, _| texts(s, |t| t.nfkc().collect()),
        },
        Wrong {
            name: "trims_texts",
            rules: &["ASR-211"],
            hard: true,
            make: |s, _| texts(s, |t| t.trim().to_owned()),
        },
        Wrong {
            name: "converts_line_endings",
            rules: &["ASR-211"],
            hard: true,
            make: |s, _| texts(s, |t| t.replace("\r\n", "\n")),
        },
        Wrong {
            name: "marks_every_user_message_human",
            rules: &["ASR-202", "ASR-203"],
            hard: true,
            make: |s, _| user_human(s),
        },
        Wrong {
            name: "writes_the_record_id_as_message_id",
            rules: &["ASR-203", "ASR-219"],
            hard: false,
            make: message_ids_from_record_ids,
        },
        Wrong {
            name: "infers_every_facets_evidence",
            rules: &["ASR-404"],
            hard: true,
            make: |s, _| evidence_inferred(s),
        },
        Wrong {
            name: "guesses_a_fork_for_an_unknown_pointer",
            rules: &["ASR-403", "ASR-405"],
            hard: true,
            make: |s, _| related_as_fork(s),
        },
        Wrong {
            name: "guesses_a_scope",
            rules: &["ASR-410"],
            hard: true,
            make: guess_scope,
        },
        Wrong {
            name: "marks_a_childs_prompts_copied",
            rules: &["ASR-414"],
            hard: true,
            make: |s, _| copies_in_children(s),
        },
        Wrong {
            name: "sets_from_because_of_author",
            rules: &["ASR-226"],
            hard: true,
            make: |s, _| from_by_author(s),
        },
        Wrong {
            name: "drops_reasoning",
            rules: &["ASR-211", "ASR-219"],
            hard: false,
            make: |s, _| drop_reasoning(s),
        },
        Wrong {
            name: "moves_what_the_user_saw_into_content",
            rules: &["ASR-207"],
            hard: true,
            make: |s, _| display_as_content(s),
        },
        Wrong {
            name: "drops_display_content",
            rules: &["ASR-211"],
            hard: false,
            make: |s, _| drop_display(s),
        },
    ]
}

fn kind(record: &Map<String, Value>) -> &str {
    record.get("type").and_then(Value::as_str).unwrap_or("")
}

fn str_of<'a>(record: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    record.get(key).and_then(Value::as_str)
}

/// Renumbers `seq` after records were moved, added or removed (the header keeps 0).
fn renumber(records: &mut [Map<String, Value>]) {
    for (n, record) in records.iter_mut().enumerate() {
        record.insert("seq".into(), json!(n));
    }
}

fn drop_tool_results(streams: &mut Vec<Stream>) {
    for (_, records) in streams.iter_mut() {
        records.retain(|r| kind(r) != "tool_result");
        renumber(records);
    }
}

/// A new call id for a tool call (old id, record), or none to keep it.
type Rename = dyn Fn(&str, &Map<String, Value>) -> Option<String>;

fn rename_calls(streams: &mut Vec<Stream>, rename: &Rename) {
    let mut map = std::collections::BTreeMap::new();
    for (_, records) in streams.iter() {
        for record in records {
            if kind(record) == "tool_call"
                && let Some(old) = str_of(record, "callId")
                && let Some(new) = rename(old, record)
            {
                map.insert(old.to_owned(), new);
            }
        }
    }
    for (_, records) in streams.iter_mut() {
        for record in records.iter_mut() {
            if let Some(new) = str_of(record, "callId").and_then(|old| map.get(old)) {
                record.insert("callId".into(), json!(new));
            }
        }
    }
}

fn call_ids_from_record_ids(streams: &mut Vec<Stream>) {
    rename_calls(streams, &|_, record| {
        str_of(record, "id").map(|id| format!("call-{id}"))
    });
}

fn rotate_result_calls(streams: &mut Vec<Stream>) {
    for (_, records) in streams.iter_mut() {
        let calls: Vec<String> = records
            .iter()
            .filter(|r| kind(r) == "tool_result")
            .filter_map(|r| str_of(r, "callId").map(str::to_owned))
            .collect();
        let distinct: std::collections::BTreeSet<&String> = calls.iter().collect();
        let outputs: Vec<&Value> = records
            .iter()
            .filter(|r| kind(r) == "tool_result")
            .filter_map(|r| r.get("output"))
            .collect();
        let unlike = outputs
            .iter()
            .enumerate()
            .all(|(n, a)| outputs[n + 1..].iter().all(|b| a != b));
        // Results of one text each can be told apart: pairing them wrong is a mistake.
        if distinct.len() < 2 || !unlike {
            continue;
        }
        let mut next = calls.iter().cycle().skip(1);
        for record in records.iter_mut().filter(|r| kind(r) == "tool_result") {
            if let Some(call) = next.next() {
                record.insert("callId".into(), json!(call));
            }
        }
    }
}

fn each_text(value: &mut Value, f: &dyn Fn(&str) -> String) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(|v| each_text(v, f)),
        Value::Object(members) => {
            for (key, v) in members.iter_mut() {
                match v {
                    Value::String(s) if key == "text" => *s = f(s),
                    Value::Array(items) if key == "summary" => {
                        for item in items {
                            if let Value::String(s) = item {
                                *s = f(s);
                            }
                        }
                    }
                    _ => each_text(v, f),
                }
            }
        }
        _ => {}
    }
}

/// Every text of every part (and summary segment) rewritten by `f`.
fn texts(streams: &mut Vec<Stream>, f: fn(&str) -> String) {
    for (_, records) in streams.iter_mut() {
        for record in records.iter_mut() {
            for key in ["content", "displayContent", "output"] {
                if let Some(parts) = record.get_mut(key) {
                    each_text(parts, &f);
                }
            }
        }
    }
}

fn tool_output_newlines(streams: &mut Vec<Stream>) {
    for (_, records) in streams.iter_mut() {
        for record in records.iter_mut().filter(|r| kind(r) == "tool_result") {
            if let Some(output) = record.get_mut("output") {
                each_text(output, &|t| t.replace('\n', " "));
            }
        }
    }
}

fn sort_by_ts(streams: &mut Vec<Stream>) {
    for (_, records) in streams.iter_mut() {
        if records.len() < 3 {
            continue;
        }
        let body = &mut records[1..];
        body.sort_by(|a, b| {
            str_of(a, "ts")
                .unwrap_or("")
                .cmp(str_of(b, "ts").unwrap_or(""))
        });
        renumber(records);
    }
}

fn results_first(streams: &mut Vec<Stream>) {
    for (_, records) in streams.iter_mut() {
        for n in 1..records.len() {
            if kind(&records[n]) != "tool_result" {
                continue;
            }
            let call = str_of(&records[n], "callId").map(str::to_owned);
            if let Some(at) = (0..n).rev().find(|m| {
                kind(&records[*m]) == "tool_call"
                    && str_of(&records[*m], "callId").map(str::to_owned) == call
            }) {
                let result = records.remove(n);
                records.insert(at, result);
            }
        }
        renumber(records);
    }
}

fn scope(stream: &Stream) -> Option<&str> {
    stream.1.first().and_then(|h| str_of(h, "scope"))
}

fn drop_sidechains(streams: &mut Vec<Stream>) {
    if streams.len() > 1 {
        streams.retain(|s| scope(s) != Some("subagent"));
    }
}

fn fold_sidechains(streams: &mut Vec<Stream>) {
    if streams.len() < 2 {
        return;
    }
    let Some(parent) = streams.iter().position(|s| scope(s) != Some("subagent")) else {
        return;
    };
    let children: Vec<Stream> = streams
        .iter()
        .enumerate()
        .filter(|(n, s)| *n != parent && scope(s) == Some("subagent"))
        .map(|(_, s)| s.clone())
        .collect();
    if children.is_empty() {
        return;
    }
    streams.retain(|s| scope(s) != Some("subagent") || s.1.is_empty());
    let Some(parent) = streams.iter_mut().find(|s| scope(s) != Some("subagent")) else {
        return;
    };
    for (name, records) in children {
        for mut record in records.into_iter().skip(1) {
            let id = str_of(&record, "id").unwrap_or("").to_owned();
            record.insert("id".into(), json!(format!("{name}-{id}")));
            record.remove("supersedes");
            parent.1.push(record);
        }
    }
    renumber(&mut parent.1);
}

fn sidechain_human(streams: &mut Vec<Stream>) {
    for stream in streams.iter_mut() {
        if scope(stream) != Some("subagent") {
            continue;
        }
        for record in &mut stream.1 {
            if kind(record) == "message" && str_of(record, "role") == Some("user") {
                record.insert("author".into(), json!("human"));
                strip_part_authors(record);
            }
        }
    }
}

fn strip_part_authors(record: &mut Map<String, Value>) {
    if let Some(Value::Array(parts)) = record.get_mut("content") {
        for part in parts.iter_mut().filter_map(Value::as_object_mut) {
            part.remove("author");
        }
    }
}

fn user_human(streams: &mut Vec<Stream>) {
    for (_, records) in streams.iter_mut() {
        for record in records.iter_mut() {
            if kind(record) == "message" && str_of(record, "role") == Some("user") {
                record.insert("author".into(), json!("human"));
                strip_part_authors(record);
            }
        }
    }
}

/// The first text of a stream's first user message.
fn first_prompt(stream: &Stream) -> Option<String> {
    stream
        .1
        .iter()
        .find(|r| kind(r) == "message" && str_of(r, "role") == Some("user"))
        .and_then(|r| {
            r.get("content")?
                .get(0)?
                .get("text")?
                .as_str()
                .map(str::to_owned)
        })
}

fn link_by_prompt(streams: &mut Vec<Stream>) {
    let prompts: Vec<(String, String)> = streams
        .iter()
        .filter(|s| scope(s) == Some("subagent"))
        .filter_map(|s| {
            Some((
                str_of(s.1.first()?, "sessionId")?.to_owned(),
                first_prompt(s)?,
            ))
        })
        .collect();
    let mut links = Vec::new();
    for (_, records) in streams.iter() {
        for record in records.iter().filter(|r| kind(r) == "tool_call") {
            let prompt = record
                .get("input")
                .and_then(|i| i.get("prompt"))
                .and_then(Value::as_str);
            for (child, text) in &prompts {
                if prompt == Some(text.as_str())
                    && let Some(call) = str_of(record, "callId")
                {
                    links.push((child.clone(), call.to_owned()));
                }
            }
        }
    }
    for (child, call) in links {
        for (_, records) in streams.iter_mut() {
            for record in records.iter_mut() {
                let names_child = kind(record) == "subagent"
                    && str_of(record, "childSession")
                        .is_some_and(|c| c.ends_with(&format!(":{child}")));
                if names_child && !record.contains_key("callId") {
                    record.insert("callId".into(), json!(call));
                }
                if kind(record) == "session"
                    && str_of(record, "sessionId") == Some(child.as_str())
                    && let Some(spawned) = record
                        .get_mut("lineage")
                        .and_then(|l| l.get_mut("spawnedBy"))
                        .and_then(Value::as_object_mut)
                {
                    spawned.insert("record".into(), json!(format!("callId={call}")));
                }
            }
        }
    }
}

fn lineage_of(stream: &mut Stream) -> Option<&mut Map<String, Value>> {
    let header = stream.1.first_mut()?;
    if kind(header) != "session" {
        return None;
    }
    header
        .entry("lineage")
        .or_insert_with(|| json!({}))
        .as_object_mut()
}

fn root_everywhere(streams: &mut Vec<Stream>) {
    for stream in streams.iter_mut() {
        if let Some(lineage) = lineage_of(stream) {
            lineage.insert("root".into(), json!(true));
        }
    }
}

fn executed_by_model(streams: &mut Vec<Stream>) {
    for stream in streams.iter_mut() {
        let agent = stream
            .1
            .first()
            .and_then(|h| h.get("agent")?.get("name")?.as_str().map(str::to_owned))
            .unwrap_or_else(|| "claude-code".into());
        if let Some(lineage) = lineage_of(stream) {
            lineage.insert(
                "executedBy".into(),
                json!([{"session": format!("{agent}:claude-sonnet-4-5-20250929"), "evidence": "native_field"}]),
            );
        }
    }
}

fn is_reasoning_only(record: &Map<String, Value>) -> bool {
    kind(record) == "message"
        && record
            .get("content")
            .and_then(Value::as_array)
            .is_some_and(|c| {
                c.len() == 1 && c[0].get("type").and_then(Value::as_str) == Some("reasoning")
            })
}

/// The native ids of the source's items of `kind`.
fn native_ids<'f>(facts: &'f Facts, kind: &ItemKind) -> Vec<&'f str> {
    facts
        .items
        .iter()
        .filter(|i| i.kind == *kind)
        .flat_map(|i| i.ids.iter().map(String::as_str))
        .collect()
}

fn fold_reasoning(streams: &mut Vec<Stream>, facts: &Facts) {
    let native = native_ids(facts, &ItemKind::Reasoning);
    for (_, records) in streams.iter_mut() {
        let mut n = 1;
        while n < records.len() {
            let next = (n + 1..records.len()).find(|m| {
                kind(&records[*m]) == "message"
                    && str_of(&records[*m], "role") == Some("assistant")
                    && !is_reasoning_only(&records[*m])
            });
            match next {
                Some(m)
                    if is_reasoning_only(&records[n])
                        && str_of(&records[n], "messageId")
                            .is_some_and(|id| native.contains(&id)) =>
                {
                    let part = records[n].get("content").and_then(|c| c.get(0)).cloned();
                    if let (Some(part), Some(Value::Array(content))) =
                        (part, records[m].get_mut("content"))
                    {
                        content.insert(0, part);
                    }
                    records.remove(n);
                }
                _ => n += 1,
            }
        }
        renumber(records);
    }
}

fn message_ids_from_record_ids(streams: &mut Vec<Stream>, facts: &Facts) {
    let mut native = native_ids(facts, &ItemKind::Message);
    native.extend(native_ids(facts, &ItemKind::Reasoning));
    for (_, records) in streams.iter_mut() {
        for record in records.iter_mut() {
            if kind(record) == "message"
                && str_of(record, "messageId").is_some_and(|id| native.contains(&id))
                && let Some(id) = str_of(record, "id").map(str::to_owned)
            {
                record.insert("messageId".into(), json!(format!("m-{id}")));
            }
        }
    }
}

fn facets(stream: &mut Stream) -> Vec<&mut Map<String, Value>> {
    let Some(lineage) = stream
        .1
        .first_mut()
        .and_then(|h| h.get_mut("lineage"))
        .and_then(Value::as_object_mut)
    else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (name, value) in lineage.iter_mut() {
        match value {
            Value::Object(facet) if name != "inherits" || facet.contains_key("evidence") => {
                found.push(facet);
            }
            Value::Array(entries) => {
                found.extend(entries.iter_mut().filter_map(Value::as_object_mut));
            }
            _ => {}
        }
    }
    found
}

fn evidence_inferred(streams: &mut Vec<Stream>) {
    for stream in streams.iter_mut() {
        for facet in facets(stream) {
            if facet.contains_key("evidence") {
                facet.insert("evidence".into(), json!("converter_inference"));
            }
        }
    }
}

fn related_as_fork(streams: &mut Vec<Stream>) {
    for stream in streams.iter_mut() {
        let Some(lineage) = stream
            .1
            .first_mut()
            .and_then(|h| h.get_mut("lineage"))
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        if let Some(related) = lineage.remove("relatedUnknown") {
            lineage.insert("forkedFrom".into(), related);
        }
    }
}

/// A scope guessed from the lineage: subagent under a parent facet, else primary; where
/// the source marks the scope, the other one.
fn guess_scope(streams: &mut Vec<Stream>, facts: &Facts) {
    for stream in streams.iter_mut() {
        let Some(header) = stream.1.first_mut().filter(|h| kind(h) == "session") else {
            continue;
        };
        let marked = str_of(header, "sessionId").and_then(|id| {
            facts
                .sessions
                .iter()
                .find(|s| s.id == id || s.aliases.iter().any(|a| a == id))
                .map(|s| s.scope.clone())
        });
        let parent = header
            .get("lineage")
            .is_some_and(|l| l.get("spawnedBy").is_some() || l.get("relatedUnknown").is_some());
        let guessed = match marked {
            Some(Some(scope)) if scope == "primary" => "subagent",
            Some(Some(_)) => "primary",
            _ if parent => "subagent",
            _ => "primary",
        };
        header.insert("scope".into(), json!(guessed));
    }
}

fn copies_in_children(streams: &mut Vec<Stream>) {
    for stream in streams.iter_mut() {
        let parent = stream.1.first().and_then(|h| {
            let l = h.get("lineage")?;
            ["spawnedBy", "forkedFrom", "relatedUnknown"]
                .iter()
                .find_map(|f| l.get(*f)?.get("session")?.as_str().map(str::to_owned))
        });
        let Some(parent) = parent else { continue };
        for record in &mut stream.1 {
            if kind(record) == "message"
                && str_of(record, "role") == Some("user")
                && !record.contains_key("copiedFrom")
            {
                record.insert(
                    "copiedFrom".into(),
                    json!({"session": parent, "proof": "native_field"}),
                );
            }
        }
    }
}

fn from_by_author(streams: &mut Vec<Stream>) {
    for stream in streams.iter_mut() {
        let own = stream.1.first().and_then(|h| {
            Some(format!(
                "{}:{}",
                h.get("agent")?.get("name")?.as_str()?,
                str_of(h, "sessionId")?
            ))
        });
        let Some(own) = own else { continue };
        for record in &mut stream.1 {
            if kind(record) == "message"
                && str_of(record, "author") == Some("model")
                && !record.contains_key("from")
            {
                record.insert("from".into(), json!({"session": own}));
            }
        }
    }
}

fn drop_reasoning(streams: &mut Vec<Stream>) {
    for (_, records) in streams.iter_mut() {
        records.retain(|r| !is_reasoning_only(r));
        for record in records.iter_mut() {
            if let Some(Value::Array(parts)) = record.get_mut("content") {
                parts.retain(|p| p.get("type").and_then(Value::as_str) != Some("reasoning"));
            }
        }
        renumber(records);
    }
}

fn drop_display(streams: &mut Vec<Stream>) {
    for (_, records) in streams.iter_mut() {
        for record in records.iter_mut() {
            record.remove("displayContent");
            record.remove("displayCorrespondence");
        }
    }
}

/// A message of which the source holds only what the user saw, written as if the model had
/// received it.
fn display_as_content(streams: &mut Vec<Stream>) {
    for (_, records) in streams.iter_mut() {
        for record in records.iter_mut() {
            let empty = record
                .get("content")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty);
            if kind(record) == "message"
                && empty
                && let Some(display) = record.remove("displayContent")
            {
                record.insert("content".into(), display);
                if let Some(capture) = record.get_mut("capture").and_then(Value::as_object_mut) {
                    capture.remove("content");
                }
            }
        }
    }
}
