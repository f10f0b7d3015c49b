//! One mutator per clause of every stream-checkable rule: each takes a valid stream and
//! breaks exactly that clause, in a record it picks or in one it adds, and says which line
//! it broke. The reference reports exactly the clause's rule at error level on the result
//! (a test checks every mutator on many generated streams).
//!
//! ```
//! use arbitrary::Unstructured;
//! use asr_suite::check::{CheckOptions, check_bytes};
//! use asr_suite::fuzz::{generator, mutate, seeded_bytes};
//!
//! let data = seeded_bytes(7, 8192);
//! let mut u = Unstructured::new(&data);
//! let valid = generator::stream(&mut u, &generator::Config::default()).expect("a stream");
//! let mutation = mutate::mutate(&valid, &mut u).expect("a mutation");
//! let report = check_bytes(&mutation.stream.to_bytes(), &CheckOptions::default());
//! assert!(report.diagnostics.iter().any(|d| d.rule == mutation.rule && d.line == mutation.line));
//! ```

use super::generator::Stream;
use crate::rule::{self, RuleId};
use arbitrary::{Result, Unstructured};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// A mutator: the clause it breaks, the rule the reference reports it under, and how.
pub struct Mutator {
    /// The clause (`ASR-221.a`).
    pub clause: &'static str,
    /// The rule the reference reports the broken clause under.
    pub rule: RuleId,
    apply: fn(&mut Stream, &mut Unstructured<'_>) -> Result<usize>,
}

impl std::fmt::Debug for Mutator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mutator")
            .field("clause", &self.clause)
            .field("rule", &self.rule)
            .finish_non_exhaustive()
    }
}

/// A broken stream: the clause broken, its rule, and the 1-based line of the broken record.
#[derive(Debug, Clone)]
pub struct Mutation {
    /// The clause broken.
    pub clause: &'static str,
    /// The rule the reference reports it under.
    pub rule: RuleId,
    /// The stream.
    pub stream: Stream,
    /// The line of the record that breaks it.
    pub line: usize,
}

impl Mutator {
    /// Breaks the clause in a copy of `stream`.
    pub fn apply(&self, stream: &Stream, u: &mut Unstructured<'_>) -> Result<Mutation> {
        let mut broken = stream.clone();
        let index = (self.apply)(&mut broken, u)?;
        Ok(Mutation {
            clause: self.clause,
            rule: self.rule,
            stream: broken,
            line: index + 1,
        })
    }
}

/// Breaks one clause, chosen by `u`, in a copy of `stream`.
pub fn mutate(stream: &Stream, u: &mut Unstructured<'_>) -> Result<Mutation> {
    let mutator = u.choose(MUTATORS)?;
    mutator.apply(stream, u)
}

/// Every mutator.
pub fn mutators() -> &'static [Mutator] {
    MUTATORS
}

/// The clauses some mutator breaks.
pub fn covered_clauses() -> BTreeSet<String> {
    MUTATORS.iter().map(|m| m.clause.to_owned()).collect()
}

/// A mutator of a clause (`ASR_221_A`), or of an inferred check, whose clause is the check
/// itself (`check ASR_X_001`).
macro_rules! mutator {
    (check $check:ident, $apply:expr) => {
        Mutator {
            clause: rule::$check.as_str(),
            rule: rule::$check,
            apply: $apply,
        }
    };
    ($clause:ident, $apply:expr) => {
        Mutator {
            clause: rule::$clause.as_str(),
            rule: rule::$clause.rule(),
            apply: $apply,
        }
    };
}

static MUTATORS: &[Mutator] = &[
    // The inferred checks, each on a line of its own appended to the stream (nothing names
    // it) or, for a byte order mark, the header's line. The "clause" is the check's id.
    mutator!(check ASR_X_001, |s, _| {
        let seq = next_seq(s);
        let mut line =
            format!(r#"{{"type":"x-acme-event","seq":{seq},"id":"m{seq}","note":""#).into_bytes();
        line.extend_from_slice(b"\xFF\xFE\"}");
        Ok(append_raw(s, &line))
    }),
    mutator!(check ASR_X_002, |s, _| {
        let mut line = b"\xEF\xBB\xBF".to_vec();
        line.extend(serde_json::to_vec(&s.records[0]).unwrap_or_default());
        s.records[0] = Stream::raw_line(&line);
        Ok(0)
    }),
    mutator!(check ASR_X_003, |s, u| {
        let seq = next_seq(s);
        let truncated = format!(r#"{{"type":"message","seq":{seq},"id":"m{seq}","content":["#);
        let line = match u.int_in_range(0..=4)? {
            0 => "[1,2]".to_owned(),
            1 => r#""a string""#.to_owned(),
            2 => "42".to_owned(),
            3 => String::new(),
            _ => truncated,
        };
        Ok(append_raw(s, line.as_bytes()))
    }),
    mutator!(check ASR_X_004, |s, _| {
        let seq = next_seq(s);
        let line =
            format!(r#"{{"type":"x-acme-event","seq":{seq},"id":"m{seq}","note":1,"note":2}}"#);
        Ok(append_raw(s, line.as_bytes()))
    }),
    mutator!(check ASR_X_005, |s, _| {
        let seq = next_seq(s);
        let line = format!(r#"{{"type":"x-acme-event","seq":{seq},"id":"m{seq}","n":1e999}}"#);
        Ok(append_raw(s, line.as_bytes()))
    }),
    mutator!(check ASR_X_006, |s, _| {
        let seq = next_seq(s);
        let depth = crate::json::MAX_DEPTH + 8;
        let line = format!(
            r#"{{"type":"x-acme-event","seq":{seq},"id":"m{seq}","deep":{}{}}}"#,
            "[".repeat(depth),
            "]".repeat(depth)
        );
        Ok(append_raw(s, line.as_bytes()))
    }),
    mutator!(check ASR_X_007, |s, _| {
        // A second header: the first line is the header, this one a record out of place.
        let mut second = new_record(s, "session");
        second.insert("formatVersion".into(), "0.1".into());
        second.insert("agent".into(), json!({"name": "codex"}));
        second.insert("sessionId".into(), "second".into());
        Ok(append(s, second))
    }),
    mutator!(check ASR_X_008, |s, _| {
        // The seq of the record before it: no longer increasing.
        let seq = next_seq(s).saturating_sub(1);
        let mut record = new_record(s, "x-acme-event");
        record.insert("seq".into(), seq.into());
        Ok(append(s, record))
    }),
    mutator!(check ASR_X_009, |s, _| {
        let mut record = new_record(s, "x-acme-event");
        let first = s.records.get(1).unwrap_or(&s.records[0]);
        let taken = first.get("id").cloned().unwrap_or_else(|| "h".into());
        record.insert("id".into(), taken);
        Ok(append(s, record))
    }),
    mutator!(check ASR_X_010, |s, _| {
        let mut record = new_record(s, "x-acme-event");
        record.remove("type");
        Ok(append(s, record))
    }),
    mutator!(check ASR_X_013, |s, _| {
        let mut record = new_record(s, "x-acme-event");
        record.insert("capture".into(), json!({"content": {"note": "no state"}}));
        Ok(append(s, record))
    }),
    mutator!(check ASR_X_016, |s, _| {
        let mut record = new_record(s, "x-acme-event");
        record.insert("ts".into(), 1_767_225_600.into());
        Ok(append(s, record))
    }),
    mutator!(ASR_200_A, |s, u| edit_message(s, u, |m| {
        m.remove("messageId");
    })),
    mutator!(ASR_200_B, |s, u| edit_message(s, u, |m| {
        m.remove("content");
    })),
    mutator!(ASR_200_C, |s, u| edit_message(s, u, |m| {
        m.remove("role");
        if let Some(capture) = m.get_mut("capture").and_then(Value::as_object_mut) {
            capture.remove("role");
        }
    })),
    mutator!(ASR_204_A, |s, u| {
        let audience = *u.choose(&["everyone", "assistant", "USER", ""])?;
        edit_message(s, u, |m| {
            m.insert("audience".into(), audience.into());
        })
    }),
    mutator!(ASR_205_A, |s, u| {
        let author = *u.choose(&["hook", "model", "human"])?;
        Ok(append(s, notice(author, "user")))
    }),
    mutator!(ASR_205_B, |s, u| {
        let audience = *u.choose(&["both", "model"])?;
        Ok(append(s, notice("harness", audience)))
    }),
    mutator!(ASR_206_A, |s, u| {
        let status = u
            .choose(&[json!(true), json!(3), json!(["complete"])])?
            .clone();
        edit_message(s, u, |m| {
            m.insert("status".into(), status);
        })
    }),
    mutator!(ASR_208_A, |s, u| {
        let value = u
            .choose(&[json!(false), json!(["same"]), json!(1)])?
            .clone();
        edit_message(s, u, |m| {
            m.insert(
                "displayContent".into(),
                json!([{"type": "text", "text": "shown"}]),
            );
            m.insert("content".into(), json!([{"type": "text", "text": "sent"}]));
            m.insert("displayCorrespondence".into(), value);
        })
    }),
    mutator!(ASR_210_A, |s, u| {
        let part = u
            .choose(&[json!("text"), json!(7), json!(null), json!(["a"])])?
            .clone();
        add_part(s, u, part)
    }),
    mutator!(ASR_210_B, |s, u| {
        let part = u
            .choose(&[json!({"text": "no type"}), json!({"type": 3, "text": "x"})])?
            .clone();
        add_part(s, u, part)
    }),
    mutator!(ASR_212_A, |s, u| {
        let kind = *u.choose(&["image", "audio"])?;
        add_part(s, u, json!({"type": kind, "data": "AA=="}))
    }),
    mutator!(ASR_212_B, |s, u| {
        let kind = *u.choose(&["image", "audio"])?;
        add_part(
            s,
            u,
            json!({"type": kind, "mimeType": "image/png", "data": "AA==", "blob": {"blob": "sha256:0"}}),
        )
    }),
    mutator!(ASR_213_A, |s, u| add_part(
        s,
        u,
        json!({"type": "resource_link", "name": "lib.rs"})
    )),
    mutator!(ASR_213_B, |s, u| add_part(
        s,
        u,
        json!({"type": "resource_link", "uri": "file:///lib.rs"})
    )),
    mutator!(ASR_213_C, |s, u| add_part(
        s,
        u,
        json!({"type": "resource", "resource": {"text": "no uri"}})
    )),
    mutator!(ASR_213_D, |s, u| {
        let resource = u
            .choose(&[
                json!({"uri": "file:///a", "text": "t", "blob": "AA=="}),
                json!({"uri": "file:///a", "text": "t", "blobRef": {"blob": "sha256:1"}}),
                json!({"uri": "file:///a", "blob": "AA==", "blobRef": {"blob": "sha256:1"}}),
            ])?
            .clone();
        add_part(s, u, json!({"type": "resource", "resource": resource}))
    }),
    mutator!(ASR_214_A, |s, u| add_part(
        s,
        u,
        json!({"type": "reasoning", "visibility": "summary", "text": "the whole chain of thought", "summary": ["short"]})
    )),
    mutator!(ASR_214_B, |s, u| add_part(
        s,
        u,
        json!({"type": "reasoning", "visibility": "full", "summary": ["only a summary"]})
    )),
    mutator!(ASR_217_A, |s, u| add_part(s, u, json!({"type": "refusal"}))),
    mutator!(ASR_221_A, |s, _| {
        let mut plan = new_plan(s, "plan_m");
        plan.remove("planId");
        Ok(append(s, plan))
    }),
    mutator!(ASR_221_B, |s, _| {
        let mut plan = new_plan(s, "plan_m");
        plan.remove("planType");
        Ok(append(s, plan))
    }),
    mutator!(ASR_221_C, |s, _| {
        let mut plan = new_plan(s, "plan_m");
        plan.remove("entries");
        Ok(append(s, plan))
    }),
    mutator!(ASR_221_D, |s, _| {
        let mut plan = new_plan(s, "plan_m");
        plan.insert("entries".into(), json!([{"status": "pending"}]));
        Ok(append(s, plan))
    }),
    mutator!(ASR_221_E, |s, _| {
        let mut plan = new_plan(s, "plan_m");
        plan.insert("entries".into(), json!([{"content": "step"}]));
        Ok(append(s, plan))
    }),
    mutator!(ASR_221_F, |s, u| {
        let kind = *u.choose(&["document", "goal"])?;
        let mut plan = new_plan(s, "plan_m");
        plan.remove("entries");
        plan.insert("planType".into(), kind.into());
        Ok(append(s, plan))
    }),
    mutator!(ASR_222_A, |s, _| {
        let first = new_plan(s, "plan_twice");
        append(s, first);
        let second = new_plan(s, "plan_twice");
        Ok(append(s, second))
    }),
    mutator!(ASR_222_B, |s, _| {
        let first = new_plan(s, "plan_one");
        let first_id = id_of(&first);
        append(s, first);
        let mut other = new_plan(s, "plan_other");
        other.insert("supersedes".into(), first_id.into());
        Ok(append(s, other))
    }),
    mutator!(ASR_222_C, |s, _| {
        let first = new_plan(s, "plan_chain");
        let first_id = id_of(&first);
        append(s, first);
        let mut second = new_plan(s, "plan_chain");
        second.insert("supersedes".into(), first_id.clone().into());
        append(s, second);
        let mut third = new_plan(s, "plan_chain");
        third.insert("supersedes".into(), first_id.into());
        Ok(append(s, third))
    }),
    mutator!(ASR_224_A, |s, u| add_part(
        s,
        u,
        json!({"type": "text", "text": "x", "author": 1})
    )),
    mutator!(ASR_224_B, |s, u| add_part(
        s,
        u,
        json!({"type": "text", "text": "x", "origin": ["prompt"]})
    )),
    mutator!(ASR_224_C, |s, u| add_part(
        s,
        u,
        json!({"type": "text", "text": "x", "phase": false})
    )),
    mutator!(ASR_227_A, |s, u| edit_message(s, u, |m| {
        m.insert("conversation".into(), "never-declared".into());
    })),
    mutator!(ASR_228_A, |s, u| {
        let from = u
            .choose(&[json!({}), json!("alice"), json!({"session": "no agent"})])?
            .clone();
        edit_message(s, u, |m| {
            m.insert("from".into(), from);
        })
    }),
    mutator!(ASR_228_B, |s, u| {
        let actor = u
            .choose(&[json!({}), json!(5), json!({"session": "bad ref"})])?
            .clone();
        edit_message(s, u, |m| {
            m.insert("recipients".into(), json!([{"actor": actor}]));
        })
    }),
    mutator!(ASR_228_C, |s, u| {
        let entry = *u.choose(&["no agent#r1", "codex:other-session"])?;
        edit_message(s, u, |m| {
            m.insert("derivedFrom".into(), json!([entry]));
        })
    }),
    mutator!(ASR_230_A, |s, u| add_part(
        s,
        u,
        json!({"type": "data", "schema": "x"})
    )),
    mutator!(ASR_231_A, |s, u| add_part(
        s,
        u,
        json!({"type": "opaque", "data": "AA=="})
    )),
    mutator!(ASR_231_B, |s, u| add_part(
        s,
        u,
        json!({"type": "opaque", "format": "x", "data": "AA==", "blob": {"blob": "sha256:0"}})
    )),
    mutator!(ASR_233_A, |s, u| {
        let index = message_with_parts(s, u, 2)?;
        let content = s.records[index]["content"].as_array_mut();
        if let Some(part) = content
            .and_then(|c| c.get_mut(1))
            .and_then(Value::as_object_mut)
        {
            part.insert("derivation".into(), json!({"from": 0}));
        }
        Ok(index)
    }),
    mutator!(ASR_233_B, |s, u| {
        let index = message_with_parts(s, u, 2)?;
        let content = s.records[index]["content"].as_array_mut();
        if let Some(parts) = content {
            let beyond = parts.len() + 3;
            if let Some(part) = parts.get_mut(1).and_then(Value::as_object_mut) {
                part.insert(
                    "derivation".into(),
                    json!({"method": "transcription", "from": beyond}),
                );
            }
        }
        Ok(index)
    }),
    mutator!(ASR_233_C, |s, u| {
        let index = message_with_parts(s, u, 2)?;
        let content = s.records[index]["content"].as_array_mut();
        if let Some(part) = content
            .and_then(|c| c.get_mut(1))
            .and_then(Value::as_object_mut)
        {
            part.insert(
                "derivation".into(),
                json!({"method": "transcription", "from": 1}),
            );
        }
        Ok(index)
    }),
    mutator!(ASR_234_A, |s, _| {
        let mut delivery = new_record(s, "delivery");
        if let Some(target) = last_message_id(s) {
            delivery.insert("message".into(), target.into());
        }
        Ok(append(s, delivery))
    }),
    mutator!(ASR_235_A, |s, u| {
        let kind = *u.choose(&["tool_call", "x-acme-event"])?;
        let other = new_record(s, kind);
        let target = id_of(&other);
        append(s, other);
        let mut delivery = new_record(s, "delivery");
        delivery.insert("message".into(), target.into());
        delivery.insert("status".into(), "sent".into());
        Ok(append(s, delivery))
    }),
    mutator!(ASR_235_B, |s, _| {
        let mut delivery = new_record(s, "delivery");
        delivery.insert("status".into(), "queued".into());
        delivery.insert("conversation".into(), "never-declared".into());
        Ok(append(s, delivery))
    }),
    mutator!(ASR_236_A, |s, _| {
        let mut plan = new_plan(s, "plan_m");
        plan.insert(
            "entries".into(),
            json!([{"entryId": "1", "content": "a", "status": "pending"}, {"entryId": "1", "content": "b", "status": "pending"}]),
        );
        Ok(append(s, plan))
    }),
    mutator!(ASR_236_B, |s, _| {
        let mut plan = new_plan(s, "plan_m");
        plan.insert(
            "entries".into(),
            json!([{"entryId": "1", "content": "a", "status": "pending", "blockedBy": ["9"]}]),
        );
        Ok(append(s, plan))
    }),
    mutator!(ASR_236_C, |s, _| {
        let mut plan = new_plan(s, "plan_m");
        plan.insert(
            "entries".into(),
            json!([{"entryId": "1", "content": "a", "status": "pending", "blockedBy": ["1"]}]),
        );
        Ok(append(s, plan))
    }),
    // Not forkedFrom: the kit also reports a forkedFrom that is no object under ASR-407.
    mutator!(ASR_400_A, |s, u| {
        let facet = *u.choose(&["spawnedBy", "continues", "relatedUnknown"])?;
        Ok(declare(s, json!({ facet: "codex:parent" })))
    }),
    mutator!(ASR_400_B, |s, u| {
        let facet = *u.choose(&["spawnedBy", "relatedUnknown"])?;
        Ok(declare(s, json!({ facet: {"session": "codex:parent"} })))
    }),
    mutator!(ASR_400_C, |s, _| Ok(declare(
        s,
        json!({"executedBy": ["codex:worker"]})
    ))),
    mutator!(ASR_400_D, |s, _| Ok(declare(
        s,
        json!({"executedBy": [{"evidence": "native_field"}]})
    ))),
    mutator!(ASR_400_E, |s, _| Ok(declare(
        s,
        json!({"executedBy": [{"session": "codex:worker"}]})
    ))),
    mutator!(ASR_400_F, |s, u| {
        let session = *u.choose(&["no agent here", "codex:", "codex:a%zz"])?;
        Ok(declare(
            s,
            json!({"relatedUnknown": {"session": session, "evidence": "native_field"}}),
        ))
    }),
    mutator!(ASR_400_G, |s, _| Ok(declare(
        s,
        json!({"relatedUnknown": {"session": "codex:parent#r4", "evidence": "native_field"}})
    ))),
    mutator!(ASR_402_A, |s, u| {
        let facet = *u.choose(&["spawnedBy", "forkedFrom", "relatedUnknown"])?;
        Ok(declare(
            s,
            json!({"root": true, facet: {"session": "codex:parent", "evidence": "native_field"}}),
        ))
    }),
    mutator!(ASR_402_B, |s, u| {
        let mode = *u.choose(&["copied", "referenced", "rendered"])?;
        Ok(declare(
            s,
            json!({"root": true, "inherits": {"mode": mode, "from": "codex:parent", "evidence": "native_field"}}),
        ))
    }),
    mutator!(ASR_404_A, |s, u| {
        let evidence = *u.choose(&["guess", "NATIVE_FIELD", "inferred"])?;
        Ok(declare(
            s,
            json!({"relatedUnknown": {"session": "codex:parent", "evidence": evidence}}),
        ))
    }),
    mutator!(ASR_407_A, |s, _| Ok(declare(
        s,
        json!({"forkedFrom": {"session": "codex:parent", "evidence": "native_field", "record": "r3", "ordinal": 3}})
    ))),
    mutator!(ASR_407_B, |s, u| {
        let ordinal = u.choose(&[json!("3"), json!(2.5)])?.clone();
        Ok(declare(
            s,
            json!({"forkedFrom": {"session": "codex:parent", "evidence": "native_field", "ordinal": ordinal}}),
        ))
    }),
    mutator!(ASR_408_A, |s, _| Ok(declare(
        s,
        json!({"continues": {"session": "codex:before", "evidence": "native_field"}})
    ))),
    mutator!(ASR_408_B, |s, _| Ok(declare(
        s,
        json!({"continues": {"session": "codex:before", "evidence": "native_field", "reason": 7}})
    ))),
    mutator!(ASR_409_A, |s, _| Ok(declare(
        s,
        json!({"inherits": {"from": "codex:parent", "evidence": "native_field"}})
    ))),
    mutator!(ASR_409_B, |s, u| {
        let mode = *u.choose(&["copied", "referenced", "rendered"])?;
        Ok(declare(
            s,
            json!({"inherits": {"mode": mode, "evidence": "native_field"}}),
        ))
    }),
    mutator!(ASR_409_C, |s, _| Ok(declare(
        s,
        json!({"inherits": {"mode": "referenced", "from": "codex:parent", "throughId": "r2", "throughOrdinal": 2, "evidence": "native_field"}})
    ))),
    mutator!(ASR_409_D, |s, u| {
        let mode = *u.choose(&["referenced", "rendered", "none"])?;
        let mut inherits = json!({"mode": mode, "localThroughId": "h", "evidence": "native_field"});
        if mode != "none" {
            inherits["from"] = "codex:parent".into();
        }
        Ok(declare(s, json!({ "inherits": inherits })))
    }),
    mutator!(ASR_409_E, |s, _| Ok(declare(
        s,
        json!({"inherits": {"mode": "copied", "from": "codex:parent", "localThroughId": "no-such-record", "evidence": "native_field"}})
    ))),
    mutator!(ASR_411_A, |s, _| {
        let mut sub = new_record(s, "subagent");
        sub.insert("callId".into(), format!("call_m{}", s.records.len()).into());
        Ok(append(s, sub))
    }),
    mutator!(ASR_411_B, |s, u| {
        let child = *u.choose(&["no agent", "codex:", "codex:a%zz"])?;
        let mut sub = new_record(s, "subagent");
        sub.insert("childSession".into(), child.into());
        Ok(append(s, sub))
    }),
    mutator!(ASR_411_C, |s, _| {
        let mut sub = new_record(s, "subagent");
        sub.insert("childSession".into(), "codex:kid#r1".into());
        Ok(append(s, sub))
    }),
    mutator!(ASR_413_A, |s, u| edit_message(s, u, |m| {
        m.insert(
            "copiedFrom".into(),
            json!({"session": "codex:elsewhere", "record": "r1"}),
        );
    })),
    mutator!(ASR_413_B, |s, u| {
        let proof = *u.choose(&["trust_me", "native-id", ""])?;
        edit_message(s, u, |m| {
            m.insert(
                "copiedFrom".into(),
                json!({"session": "codex:elsewhere", "record": "r1", "proof": proof}),
            );
        })
    }),
    mutator!(ASR_413_C, |s, u| edit_message(s, u, |m| {
        m.insert("copiedFrom".into(), json!({"proof": "native_id"}));
    })),
    mutator!(ASR_413_D, |s, _| {
        // A copy of a record that comes after it.
        let seq = next_seq(s);
        let mut copy = message_record(seq, &format!("copy{seq}"));
        copy.insert(
            "copiedFrom".into(),
            json!({"record": format!("orig{}", seq + 1), "proof": "native_id"}),
        );
        let at = append(s, copy);
        let original = message_record(seq + 1, &format!("orig{}", seq + 1));
        append(s, original);
        Ok(at)
    }),
    mutator!(ASR_420_A, |s, _| Ok(declare(
        s,
        json!({"executedBy": {"session": "codex:worker", "evidence": "native_field"}})
    ))),
    mutator!(ASR_422_A, |s, _| {
        let header = &mut s.records[0];
        header.insert("authority".into(), "mirror".into());
        let lineage = header
            .entry("lineage")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(lineage) = lineage {
            lineage.insert(
                "executedBy".into(),
                json!([
                    {"session": "codex:one", "evidence": "native_field"},
                    {"session": "codex:two", "evidence": "native_field"}
                ]),
            );
        }
        Ok(0)
    }),
    mutator!(ASR_424_A, |s, _| {
        let n = s.records.len();
        let mut first = new_record(s, "subagent");
        first.insert("childSession".into(), format!("codex:kid-m{n}").into());
        first.insert("callId".into(), format!("call_m{n}").into());
        first.insert("status".into(), "running".into());
        let mut second = first.clone();
        append(s, first);
        let seq = next_seq(s);
        second.insert("seq".into(), seq.into());
        second.insert("id".into(), format!("m{seq}").into());
        second.insert("status".into(), "completed".into());
        Ok(append(s, second))
    }),
    mutator!(ASR_424_C, |s, _| {
        let n = s.records.len();
        let mut first = new_record(s, "subagent");
        first.insert("childSession".into(), format!("codex:kid-c{n}").into());
        first.insert("callId".into(), format!("call_c{n}").into());
        first.insert("status".into(), "running".into());
        let first_id = id_of(&first);
        let mut revision = first.clone();
        append(s, first);
        revision.insert("supersedes".into(), first_id.into());
        for status in ["stopped", "failed"] {
            let mut next = revision.clone();
            let seq = next_seq(s);
            next.insert("seq".into(), seq.into());
            next.insert("id".into(), format!("m{seq}").into());
            next.insert("status".into(), status.into());
            append(s, next);
        }
        Ok(s.records.len() - 1)
    }),
    mutator!(ASR_424_B, |s, _| {
        let n = s.records.len();
        let mut first = new_record(s, "subagent");
        first.insert("childSession".into(), format!("codex:kid-a{n}").into());
        first.insert("callId".into(), format!("call_a{n}").into());
        let first_id = id_of(&first);
        append(s, first);
        let mut other = new_record(s, "subagent");
        other.insert("childSession".into(), format!("codex:kid-b{n}").into());
        other.insert("callId".into(), format!("call_b{n}").into());
        other.insert("supersedes".into(), first_id.into());
        Ok(append(s, other))
    }),
];

/// The seq after the last record's.
fn next_seq(s: &Stream) -> u64 {
    s.records
        .iter()
        .filter_map(|r| r.get("seq").and_then(Value::as_u64))
        .max()
        .map_or(1, |seq| seq + 1)
}

/// A record of `kind` with the next seq and a fresh id.
fn new_record(s: &Stream, kind: &str) -> Map<String, Value> {
    let seq = next_seq(s);
    let mut record = Map::new();
    record.insert("type".into(), kind.into());
    record.insert("seq".into(), seq.into());
    record.insert("id".into(), format!("m{seq}").into());
    record
}

fn new_plan(s: &Stream, plan_id: &str) -> Map<String, Value> {
    let mut plan = new_record(s, "plan");
    plan.insert("planId".into(), plan_id.into());
    plan.insert("planType".into(), "items".into());
    plan.insert(
        "entries".into(),
        json!([{"content": "step", "status": "pending"}]),
    );
    plan
}

fn message_record(seq: u64, id: &str) -> Map<String, Value> {
    let value = json!({"type": "message", "seq": seq, "id": id, "messageId": format!("mm{seq}"), "role": "user", "content": [{"type": "text", "text": "x"}]});
    value.as_object().cloned().unwrap_or_default()
}

fn notice(author: &str, audience: &str) -> Map<String, Value> {
    let value = json!({"type": "message", "messageId": "notice", "role": "user", "author": author, "origin": "notice", "audience": audience, "content": [{"type": "text", "text": "Context compacted."}]});
    value.as_object().cloned().unwrap_or_default()
}

fn id_of(record: &Map<String, Value>) -> String {
    record
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

fn last_message_id(s: &Stream) -> Option<String> {
    s.records
        .iter()
        .rev()
        .find(|r| r.get("type").and_then(Value::as_str) == Some("message"))
        .map(id_of)
}

/// Appends `record` (given the next seq and a fresh id when it has none) and returns its index.
fn append(s: &mut Stream, mut record: Map<String, Value>) -> usize {
    let seq = next_seq(s);
    record.entry("seq").or_insert_with(|| seq.into());
    record
        .entry("id")
        .or_insert_with(|| format!("m{seq}").into());
    s.records.push(record);
    s.records.len() - 1
}

/// A line of these bytes, appended.
fn append_raw(s: &mut Stream, bytes: &[u8]) -> usize {
    s.records.push(Stream::raw_line(bytes));
    s.records.len() - 1
}

/// A declaration with this lineage, appended. The stream is first made neither a root nor a
/// mirror, so that the lineage added breaks only its own clause (a parent named in a root
/// stream would also break ASR-402; a second executing session in a mirror, ASR-422).
fn declare(s: &mut Stream, lineage: Value) -> usize {
    for record in &mut s.records {
        let declares = matches!(
            record.get("type").and_then(Value::as_str),
            Some("session" | "declaration")
        );
        if !declares {
            continue;
        }
        record.remove("authority");
        if let Some(lineage) = record.get_mut("lineage").and_then(Value::as_object_mut) {
            lineage.remove("root");
        }
    }
    let mut declaration = new_record(s, "declaration");
    declaration.insert("lineage".into(), lineage);
    append(s, declaration)
}

/// Edits a message record of the stream chosen by `u`, or a new one appended.
fn edit_message(
    s: &mut Stream,
    u: &mut Unstructured<'_>,
    edit: impl FnOnce(&mut Map<String, Value>),
) -> Result<usize> {
    // Not one that holds a harness notice: its author and audience are fixed by ASR-205.
    let notice = |v: &Value| v.get("origin").and_then(Value::as_str) == Some("notice");
    let messages: Vec<usize> = s
        .records
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            let parts = r.get("content").and_then(Value::as_array);
            r.get("type").and_then(Value::as_str) == Some("message")
                && r.get("origin").and_then(Value::as_str) != Some("notice")
                && !parts.is_some_and(|p| p.iter().any(notice))
        })
        .map(|(n, _)| n)
        .collect();
    let index = if messages.is_empty() || u.ratio(1, 4)? {
        let seq = next_seq(s);
        append(s, message_record(seq, &format!("m{seq}")))
    } else {
        *u.choose(&messages)?
    };
    edit(&mut s.records[index]);
    Ok(index)
}

/// Adds `part` to the content of a message, chosen or appended.
fn add_part(s: &mut Stream, u: &mut Unstructured<'_>, part: Value) -> Result<usize> {
    edit_message(s, u, |m| {
        let content = m.entry("content").or_insert_with(|| json!([]));
        if let Some(parts) = content.as_array_mut() {
            parts.push(part);
        } else {
            *content = json!([part]);
        }
        content_now_captured(m);
    })
}

/// The message's content is now there: its capture state for content goes (the others, a
/// role's among them, stay).
fn content_now_captured(m: &mut Map<String, Value>) {
    if let Some(capture) = m.get_mut("capture").and_then(Value::as_object_mut) {
        capture.remove("content");
        if capture.is_empty() {
            m.remove("capture");
        }
    }
}

/// A message with at least `parts` ordinary text parts, none with a derivation.
fn message_with_parts(s: &mut Stream, u: &mut Unstructured<'_>, parts: usize) -> Result<usize> {
    edit_message(s, u, |m| {
        let texts: Vec<Value> = (0..parts)
            .map(|n| json!({"type": "text", "text": format!("part {n}")}))
            .collect();
        m.insert("content".into(), Value::Array(texts));
        content_now_captured(m);
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_bytes};
    use crate::diagnostic::Severity;
    use crate::fuzz::generator::{Config, stream};
    use crate::fuzz::seeded_bytes;

    #[test]
    fn every_mutator_breaks_its_rule_and_no_other() {
        let mut failures = Vec::new();
        for (n, mutator) in MUTATORS.iter().enumerate() {
            for seed in 0..12 {
                let data = seeded_bytes(seed * 1000 + n as u64, 6000);
                let mut u = Unstructured::new(&data);
                let valid = stream(&mut u, &Config::default()).expect("a stream");
                let mutation = mutator.apply(&valid, &mut u).expect("a mutation");
                let report = check_bytes(&mutation.stream.to_bytes(), &CheckOptions::default());
                let errors: BTreeSet<(RuleId, usize)> = report
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                    .map(|d| (d.rule, d.line))
                    .collect();
                let rules: BTreeSet<RuleId> = errors.iter().map(|(r, _)| *r).collect();
                if rules != BTreeSet::from([mutator.rule])
                    || !errors.contains(&(mutator.rule, mutation.line))
                {
                    failures.push(format!(
                        "{} (seed {seed}): expected {} at line {}, found {errors:?}",
                        mutator.clause, mutator.rule, mutation.line
                    ));
                }
            }
        }
        assert!(
            failures.is_empty(),
            "{} failures:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }

    #[test]
    fn every_clause_of_the_catalog_has_a_mutator() {
        let catalog = crate::catalog::Catalog::embedded();
        let covered = covered_clauses();
        let missing: Vec<&str> = catalog
            .rules
            .iter()
            .flat_map(|r| r.clauses.iter())
            .map(|c| c.id.as_str())
            .filter(|id| !covered.contains(*id) && !id.starts_with("ASR-412"))
            .collect();
        assert!(missing.is_empty(), "clauses without a mutator: {missing:?}");
        for clause in &covered {
            // A mutator of an inferred check names the check (it has no clauses).
            let known = catalog.clause(clause).is_some()
                || (crate::diagnostic::is_inferred_rule(clause) && catalog.knows(clause));
            assert!(
                known,
                "a mutator names {clause}, which the catalog does not have"
            );
        }
    }
}
