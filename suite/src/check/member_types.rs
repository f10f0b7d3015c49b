//! A member of the wrong JSON type, member by member: each object, array, string and integer
//! member of each record type replaced by values of other JSON types, in a stream that is
//! valid before. The policy (the catalog's note on ASR-X-016): the member is one fault,
//! reported once, under its type check (ASR-X-016, or the member's own rule); it is judged by
//! no other rule, satisfies no condition of another member's rule (a capture state, a mode
//! that allows `localThroughId`, declared conversations), and no finding speaks of its
//! members. What another member then lacks is reported as usual: listed here as `also`.

use crate::check::{CheckOptions, check_bytes};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// A valid stream with every record type and every object member of each.
const BASE: &[&str] = &[
    r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex","version":"0.1"},"sessionId":"s1","producer":{"name":"p","version":"1","method":"converter","source":{"format":"f"},"lossy":[]},"client":{"name":"c"},"lineage":{"spawnedBy":{"session":"codex:p","record":"callId=c0","evidence":"native_field"},"forkedFrom":{"session":"codex:p","ordinal":3,"evidence":"native_field"},"continues":{"session":"codex:q","reason":"resume","evidence":"native_field"},"inherits":{"mode":"copied","from":"codex:p","throughOrdinal":3,"localThroughId":"h","evidence":"native_field"},"executedBy":[{"session":"codex:b","evidence":"native_field"}],"relatedUnknown":{"session":"codex:r","evidence":"native_field"},"role":"worker"},"scope":"subagent","workspace":{"roots":[]},"profiles":["core"],"contentLevel":"full","conversations":["c1"]}"#,
    r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","capture":{"role":{"state":"absent"}},"author":"harness","origin":"notice","audience":"user","from":{"participant":"p1"},"recipients":[{"actor":{"address":"a"},"kind":"primary"}],"conversation":"c1","platform":{"messageIds":["x"],"replyTo":"y"},"derivedFrom":["h"],"assembly":{"mode":"folded"},"copiedFrom":{"session":"codex:p","record":"r9","proof":"native_id"},"content":[{"type":"text","text":"hi","derivation":{"method":"caption","from":1},"annotations":{"audience":["user"]},"_meta":{"k":1}},{"type":"image","mimeType":"image/png","blob":{"blob":"sha256:x"}},{"type":"resource","resource":{"uri":"file:///a","text":"t"}},{"type":"reasoning","visibility":"encrypted","opaque":{"format":"f","data":"AA"}},{"type":"data","data":{"k":1}},{"type":"opaque","format":"f","blob":{"blob":"sha256:y"}},{"type":"refusal","text":"no"},{"type":"resource_link","uri":"file:///b","name":"b"}],"displayContent":[{"type":"text","text":"shown"}]}"#,
    r#"{"type":"plan","seq":2,"id":"r2","planId":"p","planType":"document","capture":{"content":{"state":"absent"}},"source":{"root":null,"path":"/x.md"},"budget":{"tokens":10},"used":{"tokens":1},"callId":"c2"}"#,
    r#"{"type":"plan","seq":3,"id":"r3","planId":"q","planType":"items","entries":[{"entryId":"1","content":"a","status":"completed"},{"entryId":"2","content":"b","status":"pending","blockedBy":["1"]}]}"#,
    r#"{"type":"delivery","seq":4,"id":"r4","message":"r1","conversation":"c1","status":"sent","platformMessageIds":["x"],"attempt":1}"#,
    r#"{"type":"subagent","seq":5,"id":"r5","capture":{"childSession":{"state":"absent"}},"callId":"c5","model":{"provider":"openai","id":"g"},"status":"running"}"#,
    r#"{"type":"subagent","seq":6,"id":"r6","childSession":"codex:kid","callId":"c6","status":"running"}"#,
    r#"{"type":"declaration","seq":7,"id":"r7","lineage":{"executedBy":[{"session":"codex:b","evidence":"native_field"}]},"conversations":["c2"]}"#,
    r#"{"type":"message","seq":8,"id":"r8","messageId":"m8","role":"assistant","content":[{"type":"text","text":"ok"}],"supersedes":"r1"}"#,
];

/// A root: no parent facet may appear beside it, and a facet of the wrong type is none.
const ROOT: &[&str] = &[
    r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"s1","lineage":{"root":true}}"#,
    r#"{"type":"declaration","seq":1,"id":"d1","lineage":{"executedBy":[{"session":"codex:b","evidence":"native_field"}]}}"#,
];

/// The JSON type a member should have.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Object,
    Array,
    String,
    Integer,
    /// Declared conversations: an array or an object.
    Conversations,
}

impl Kind {
    /// Values of every other JSON type.
    fn wrong(self) -> Vec<Value> {
        match self {
            Kind::Object => vec![json!("x"), json!(5), Value::Null, json!([])],
            Kind::Array => vec![json!("x"), json!(5), Value::Null, json!({})],
            Kind::String => vec![json!(5), Value::Null, json!([]), json!({})],
            Kind::Integer => vec![json!("1"), Value::Null, json!([]), json!({})],
            Kind::Conversations => vec![json!("c1"), json!(5), Value::Null, json!(true)],
        }
    }
}

/// A member: its record (1-based line), pointer and type; the rules its type check may be
/// reported under; and what other members then lack, reported as usual (rule, line, pointer).
struct Member {
    line: usize,
    pointer: &'static str,
    kind: Kind,
    owner: &'static [&'static str],
    also: &'static [(&'static str, usize, &'static str)],
}

const fn m(
    line: usize,
    pointer: &'static str,
    kind: Kind,
    owner: &'static [&'static str],
) -> Member {
    Member {
        line,
        pointer,
        kind,
        owner,
        also: &[],
    }
}

const X016: &[&str] = &["ASR-X-016"];

#[rustfmt::skip]
const MEMBERS: &[Member] = &[
    // The header.
    m(1, "/agent", Kind::Object, X016),
    m(1, "/producer", Kind::Object, X016),
    m(1, "/producer/source", Kind::Object, X016),
    m(1, "/producer/lossy", Kind::Array, X016),
    m(1, "/client", Kind::Object, X016),
    m(1, "/workspace", Kind::Object, X016),
    m(1, "/profiles", Kind::Array, X016),
    m(1, "/lineage", Kind::Object, X016),
    m(1, "/lineage/spawnedBy", Kind::Object, &["ASR-400"]),
    m(1, "/lineage/forkedFrom", Kind::Object, &["ASR-400"]),
    m(1, "/lineage/continues", Kind::Object, &["ASR-400"]),
    m(1, "/lineage/inherits", Kind::Object, &["ASR-400"]),
    m(1, "/lineage/relatedUnknown", Kind::Object, &["ASR-400"]),
    m(1, "/lineage/executedBy", Kind::Array, &["ASR-420"]),
    m(1, "/lineage/executedBy/0", Kind::Object, &["ASR-400"]),
    m(1, "/formatVersion", Kind::String, X016),
    m(1, "/sessionId", Kind::String, X016),
    m(1, "/scope", Kind::String, X016),
    m(1, "/lineage/role", Kind::String, X016),
    m(1, "/lineage/spawnedBy/session", Kind::String, &["ASR-400"]),
    m(1, "/lineage/spawnedBy/record", Kind::String, &["ASR-X-011"]),
    m(1, "/lineage/spawnedBy/evidence", Kind::String, &["ASR-404"]),
    m(1, "/lineage/forkedFrom/ordinal", Kind::Integer, &["ASR-407"]),
    m(1, "/lineage/continues/reason", Kind::String, &["ASR-408"]),
    m(1, "/lineage/inherits/from", Kind::String, &["ASR-X-012"]),
    m(1, "/lineage/inherits/throughOrdinal", Kind::Integer, &["ASR-409"]),
    m(1, "/lineage/inherits/localThroughId", Kind::String, &["ASR-409"]),
    Member {
        // A mode of the wrong type is not copied: localThroughId may not appear beside it.
        also: &[("ASR-409", 1, "/lineage/inherits/localThroughId")],
        ..m(1, "/lineage/inherits/mode", Kind::String, &["ASR-409"])
    },
    m(1, "/lineage/executedBy/0/session", Kind::String, &["ASR-400"]),
    m(1, "/lineage/executedBy/0/evidence", Kind::String, &["ASR-404"]),
    Member {
        // What is not declared is undeclared.
        also: &[("ASR-227", 2, "/conversation"), ("ASR-235", 5, "/conversation")],
        ..m(1, "/conversations", Kind::Conversations, X016)
    },
    // A message.
    Member {
        // No capture state: role is missing.
        also: &[("ASR-200", 2, "/role")],
        ..m(2, "/capture", Kind::Object, &["ASR-X-013"])
    },
    Member {
        also: &[("ASR-200", 2, "/role")],
        ..m(2, "/capture/role", Kind::Object, &["ASR-X-013"])
    },
    m(2, "/from", Kind::Object, &["ASR-228"]),
    m(2, "/recipients", Kind::Array, X016),
    m(2, "/recipients/0", Kind::Object, X016),
    m(2, "/recipients/0/actor", Kind::Object, &["ASR-228"]),
    m(2, "/platform", Kind::Object, X016),
    m(2, "/platform/messageIds", Kind::Array, X016),
    m(2, "/assembly", Kind::Object, X016),
    m(2, "/copiedFrom", Kind::Object, &["ASR-413"]),
    m(2, "/content", Kind::Array, X016),
    m(2, "/displayContent", Kind::Array, X016),
    m(2, "/derivedFrom", Kind::Array, X016),
    m(2, "/content/0", Kind::Object, &["ASR-210"]),
    m(2, "/content/0/derivation", Kind::Object, &["ASR-233"]),
    m(2, "/content/0/annotations", Kind::Object, X016),
    m(2, "/content/0/_meta", Kind::Object, X016),
    m(2, "/content/1/blob", Kind::Object, X016),
    m(2, "/content/2/resource", Kind::Object, &["ASR-213"]),
    m(2, "/content/3/opaque", Kind::Object, X016),
    m(2, "/content/5/blob", Kind::Object, X016),
    m(2, "/messageId", Kind::String, X016),
    m(2, "/author", Kind::String, X016),
    m(2, "/origin", Kind::String, X016),
    m(2, "/audience", Kind::String, &["ASR-204"]),
    m(2, "/status", Kind::String, &["ASR-206"]),
    m(2, "/conversation", Kind::String, X016),
    m(2, "/derivedFrom/0", Kind::String, &["ASR-228"]),
    m(2, "/copiedFrom/session", Kind::String, &["ASR-X-012"]),
    m(2, "/copiedFrom/proof", Kind::String, &["ASR-413"]),
    m(2, "/content/0/type", Kind::String, &["ASR-210"]),
    m(2, "/content/0/text", Kind::String, X016),
    m(2, "/content/0/author", Kind::String, &["ASR-224"]),
    m(2, "/content/0/derivation/method", Kind::String, X016),
    m(2, "/content/0/derivation/from", Kind::Integer, &["ASR-233"]),
    m(2, "/content/1/mimeType", Kind::String, X016),
    m(2, "/content/5/format", Kind::String, X016),
    m(2, "/content/2/resource/uri", Kind::String, X016),
    m(2, "/content/6/text", Kind::String, X016),
    m(2, "/content/7/uri", Kind::String, X016),
    m(2, "/content/7/name", Kind::String, X016),
    // Plans.
    Member {
        also: &[("ASR-221", 3, "/content")],
        ..m(3, "/capture", Kind::Object, &["ASR-X-013"])
    },
    Member {
        also: &[("ASR-221", 3, "/content")],
        ..m(3, "/capture/content", Kind::Object, &["ASR-X-013"])
    },
    m(3, "/source", Kind::Object, X016),
    m(3, "/budget", Kind::Object, X016),
    m(3, "/used", Kind::Object, X016),
    m(3, "/planId", Kind::String, X016),
    m(3, "/planType", Kind::String, X016),
    m(4, "/entries", Kind::Array, X016),
    Member {
        // Entry 1 is no longer there to block entry 2.
        also: &[("ASR-236", 4, "/entries/1/blockedBy/0")],
        ..m(4, "/entries/0", Kind::Object, &["ASR-221"])
    },
    m(4, "/entries/1/blockedBy", Kind::Array, X016),
    m(4, "/entries/1/blockedBy/0", Kind::String, &["ASR-236"]),
    m(4, "/entries/1/content", Kind::String, X016),
    m(4, "/entries/1/status", Kind::String, X016),
    Member {
        also: &[("ASR-236", 4, "/entries/1/blockedBy/0")],
        ..m(4, "/entries/0/entryId", Kind::String, &["ASR-236"])
    },
    // A delivery.
    m(5, "/platformMessageIds", Kind::Array, X016),
    m(5, "/status", Kind::String, X016),
    m(5, "/message", Kind::String, &["ASR-X-011"]),
    m(5, "/conversation", Kind::String, X016),
    m(5, "/attempt", Kind::Integer, X016),
    // Subagents.
    Member {
        also: &[("ASR-411", 6, "/childSession")],
        ..m(6, "/capture", Kind::Object, &["ASR-X-013"])
    },
    Member {
        also: &[("ASR-411", 6, "/childSession")],
        ..m(6, "/capture/childSession", Kind::Object, &["ASR-X-013"])
    },
    m(6, "/model", Kind::Object, X016),
    m(7, "/childSession", Kind::String, &["ASR-411"]),
    m(7, "/callId", Kind::String, X016),
    // A declaration.
    m(8, "/lineage", Kind::Object, X016),
    m(8, "/lineage/executedBy", Kind::Array, &["ASR-420"]),
    m(8, "/lineage/executedBy/0", Kind::Object, &["ASR-400"]),
    m(8, "/conversations", Kind::Conversations, X016),
    // A revision.
    m(9, "/supersedes", Kind::String, &["ASR-X-011"]),
    m(9, "/role", Kind::String, X016),
];

/// Parent facets beside `root: true`, in the header and in a declaration. A facet of the wrong
/// type is there, beside root (ASR-402 asks only that it be absent); an inherits of the wrong
/// type has no mode, so it names no ancestor.
#[rustfmt::skip]
const BESIDE_ROOT: &[Member] = &[
    Member { also: &[("ASR-402", 1, "/lineage")], ..m(1, "/lineage/spawnedBy", Kind::Object, &["ASR-400"]) },
    Member { also: &[("ASR-402", 1, "/lineage")], ..m(1, "/lineage/forkedFrom", Kind::Object, &["ASR-400"]) },
    Member { also: &[("ASR-402", 1, "/lineage")], ..m(1, "/lineage/continues", Kind::Object, &["ASR-400"]) },
    Member { also: &[("ASR-402", 1, "/lineage")], ..m(1, "/lineage/relatedUnknown", Kind::Object, &["ASR-400"]) },
    m(1, "/lineage/inherits", Kind::Object, &["ASR-400"]),
    Member { also: &[("ASR-402", 2, "/lineage")], ..m(2, "/lineage/spawnedBy", Kind::Object, &["ASR-400"]) },
    m(2, "/lineage/inherits", Kind::Object, &["ASR-400"]),
];

/// Sets the member at `pointer` (creating it in its object when absent).
fn set(value: &mut Value, pointer: &str, to: Value) {
    let (parent, last) = pointer.rsplit_once('/').expect("a pointer");
    let parent = if parent.is_empty() {
        value
    } else {
        value.pointer_mut(parent).expect("the parent exists")
    };
    match parent {
        Value::Object(map) => {
            map.insert(last.to_owned(), to);
        }
        Value::Array(items) => items[last.parse::<usize>().expect("an index")] = to,
        _ => panic!("{pointer}: the parent is no container"),
    }
}

/// Every finding but the notices about sessions not in hand: (rule, severity, line, pointer).
fn findings(lines: &[String]) -> BTreeSet<(String, String, usize, String)> {
    let stream = format!("{}\n", lines.join("\n"));
    check_bytes(stream.as_bytes(), &CheckOptions::default())
        .diagnostics
        .into_iter()
        .filter(|d| d.rule != "ASR-406")
        .map(|d| {
            (
                d.rule.to_string(),
                d.severity.to_string(),
                d.line,
                d.pointer,
            )
        })
        .collect()
}

/// What is wrong with the findings on each replacement of each member (empty when right).
fn problems(base: &[&str], members: &[Member]) -> Vec<String> {
    let lines: Vec<String> = base.iter().map(|l| (*l).to_owned()).collect();
    let before = findings(&lines);
    let mut problems = Vec::new();
    for member in members {
        for wrong in member.kind.wrong() {
            let mut record: Value = serde_json::from_str(&lines[member.line - 1]).expect("JSON");
            set(&mut record, member.pointer, wrong.clone());
            let mut mutated = lines.clone();
            mutated[member.line - 1] = record.to_string();
            let after = findings(&mutated);
            let what = format!("line {} {} = {wrong}", member.line, member.pointer);
            let typed: Vec<_> = after
                .iter()
                .filter(|(rule, severity, line, pointer)| {
                    *line == member.line
                        && pointer == member.pointer
                        && severity == "error"
                        && member.owner.contains(&rule.as_str())
                })
                .collect();
            if typed.len() != 1 {
                problems.push(format!(
                    "{what}: {} type errors under {:?}, not one: {after:?}",
                    typed.len(),
                    member.owner
                ));
            }
            for (rule, line, pointer) in member.also {
                if !after
                    .iter()
                    .any(|f| f.0 == *rule && f.2 == *line && f.3 == *pointer)
                {
                    problems.push(format!(
                        "{what}: lost {rule} at line {line} {pointer}: {after:?}"
                    ));
                }
            }
            for finding in after.difference(&before) {
                let (rule, _, line, pointer) = finding;
                let the_type = typed.first() == Some(&finding);
                let expected = member
                    .also
                    .iter()
                    .any(|(r, l, p)| r == rule && l == line && p == pointer);
                if !the_type && !expected {
                    problems.push(format!("{what}: also {finding:?}"));
                }
            }
            for finding in before.difference(&after) {
                problems.push(format!("{what}: lost {finding:?}"));
            }
        }
    }
    problems
}

#[test]
fn the_streams_are_valid_before() {
    for base in [BASE, ROOT] {
        let lines: Vec<String> = base.iter().map(|l| (*l).to_owned()).collect();
        assert!(findings(&lines).is_empty(), "{:?}", findings(&lines));
    }
}

#[test]
fn a_member_of_the_wrong_type_is_one_error_under_its_type_check_and_nothing_else() {
    let mut found = problems(BASE, MEMBERS);
    found.extend(problems(ROOT, BESIDE_ROOT));
    assert!(
        found.is_empty(),
        "{} problems:\n{}",
        found.len(),
        found.join("\n")
    );
}

/// The test itself can fail: a finding about the replaced value's members, or a lost one.
#[test]
fn the_test_sees_a_second_finding_and_a_lost_one() {
    let lines = [
        r#"{"type":"session","seq":0,"id":"h","formatVersion":"0.1","agent":{"name":"codex"},"sessionId":"s1"}"#,
        r#"{"type":"message","seq":1,"id":"r1","messageId":"m1","role":"user","content":[{"type":"text","text":"x"}]}"#,
    ];
    let twice = m(2, "/content/0/type", Kind::String, &["ASR-X-016"]);
    assert!(!problems(&lines, &[twice]).is_empty());
    let lost = Member {
        also: &[("ASR-200", 2, "/messageId")],
        ..m(2, "/role", Kind::String, X016)
    };
    assert!(!problems(&lines, &[lost]).is_empty());
}
