//! Shrinking a stream on its model, never on its bytes: records are dropped (the header
//! stays), then members (every record keeps its type, seq and id), then array elements, then strings
//! (but types) are shortened, each step kept
//! only when the property still holds. Byte-level shrinking loses the header and the
//! references between records; this keeps the stream a stream.
//!
//! ```
//! use asr_suite::fuzz::generator::Stream;
//! use asr_suite::fuzz::shrink::shrink;
//! use serde_json::json;
//!
//! let records = (0..30)
//!     .map(|n| json!({"type": "message", "seq": n, "id": format!("r{n}"), "text": "x".repeat(50)}))
//!     .map(|v| v.as_object().cloned().expect("an object"))
//!     .collect();
//! let stream = Stream { records };
//! // The property: some record still has seq 17.
//! let small = shrink(&stream, |s| s.records.iter().any(|r| r["seq"] == 17), 10_000);
//! assert_eq!(small.records.len(), 2); // the header and the record that matters
//! assert_eq!(small.records[1]["seq"], 17);
//! assert!(small.records[1].get("text").is_none());
//! ```

use super::generator::Stream;
use serde_json::{Map, Value};

/// The smallest stream found that still has the property, trying at most `budget`
/// candidates. `holds` must hold for `stream` itself.
pub fn shrink(stream: &Stream, mut holds: impl FnMut(&Stream) -> bool, budget: usize) -> Stream {
    let mut best = stream.clone();
    let tries = std::cell::Cell::new(0);
    let mut attempt = |candidate: &Stream, best: &mut Stream| -> bool {
        if tries.get() >= budget {
            return false;
        }
        tries.set(tries.get() + 1);
        if holds(candidate) {
            *best = candidate.clone();
            true
        } else {
            false
        }
    };
    loop {
        let before = size(&best);
        drop_records(&mut best, &mut attempt);
        drop_members(&mut best, &mut attempt);
        shorten_strings(&mut best, &mut attempt);
        if size(&best) >= before || tries.get() >= budget {
            return best;
        }
    }
}

/// A measure that every step makes smaller.
fn size(stream: &Stream) -> usize {
    stream.records.len() * 1_000_000 + stream.to_bytes().len()
}

type Attempt<'a> = dyn FnMut(&Stream, &mut Stream) -> bool + 'a;

/// Drops runs of records after the header: halves, quarters, ... then single records.
fn drop_records(best: &mut Stream, attempt: &mut Attempt<'_>) {
    let mut chunk = (best.records.len().saturating_sub(1) / 2).max(1);
    loop {
        let mut at = 1;
        while at < best.records.len() {
            let end = (at + chunk).min(best.records.len());
            let mut candidate = best.clone();
            candidate.records.drain(at..end);
            if !attempt(&candidate, best) {
                at = end;
            }
        }
        if chunk == 1 {
            return;
        }
        chunk /= 2;
    }
}

/// Drops members of records, and elements of arrays inside them, one at a time.
fn drop_members(best: &mut Stream, attempt: &mut Attempt<'_>) {
    let mut index = 0;
    while index < best.records.len() {
        let mut paths = Vec::new();
        collect_paths(
            &Value::Object(best.records[index].clone()),
            &mut Vec::new(),
            &mut paths,
        );
        // Deepest first, so that an element goes before the array that holds it.
        paths.sort_by_key(|p| std::cmp::Reverse(p.len()));
        for path in paths {
            // A record keeps what makes it one: its type, place and id.
            if let [Step::Key(key)] = path.as_slice() {
                if ["type", "seq", "id"].contains(&key.as_str()) {
                    continue;
                }
            }
            let mut candidate = best.clone();
            if remove_at(&mut candidate.records[index], &path) {
                attempt(&candidate, best);
            }
        }
        index += 1;
    }
}

/// Halves strings, longest first.
fn shorten_strings(best: &mut Stream, attempt: &mut Attempt<'_>) {
    for index in 0..best.records.len() {
        let mut paths = Vec::new();
        collect_strings(
            &Value::Object(best.records[index].clone()),
            &mut Vec::new(),
            &mut paths,
        );
        for path in paths {
            loop {
                let mut candidate = best.clone();
                let Some(text) = string_at(&mut candidate.records[index], &path) else {
                    break;
                };
                if text.chars().count() < 2 {
                    break;
                }
                let keep = text.chars().count() / 2;
                *text = text.chars().take(keep).collect();
                if !attempt(&candidate, best) {
                    break;
                }
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn collect_paths(value: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                path.push(Step::Key(key.clone()));
                out.push(path.clone());
                collect_paths(child, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            // From the last element, so that removing one leaves the paths before it right.
            for (n, child) in items.iter().enumerate().rev() {
                path.push(Step::Index(n));
                out.push(path.clone());
                collect_paths(child, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn collect_strings(value: &Value, path: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match value {
        Value::Object(map) => {
            // A type is a name, not text: a shorter one is another type.
            for (key, child) in map.iter().filter(|(key, _)| *key != "type") {
                path.push(Step::Key(key.clone()));
                collect_strings(child, path, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for (n, child) in items.iter().enumerate() {
                path.push(Step::Index(n));
                collect_strings(child, path, out);
                path.pop();
            }
        }
        Value::String(_) => out.push(path.clone()),
        _ => {}
    }
}

/// Removes the member or element at `path`; false when there is none.
fn remove_at(record: &mut Map<String, Value>, path: &[Step]) -> bool {
    let Some((last, parents)) = path.split_last() else {
        return false;
    };
    let mut node = match parents.first() {
        None => {
            return match last {
                Step::Key(key) => record.remove(key).is_some(),
                Step::Index(_) => false,
            };
        }
        Some(Step::Key(key)) => match record.get_mut(key) {
            Some(node) => node,
            None => return false,
        },
        Some(Step::Index(_)) => return false,
    };
    for step in &parents[1..] {
        node = match (step, node) {
            (Step::Key(key), Value::Object(map)) => match map.get_mut(key) {
                Some(next) => next,
                None => return false,
            },
            (Step::Index(n), Value::Array(items)) => match items.get_mut(*n) {
                Some(next) => next,
                None => return false,
            },
            _ => return false,
        };
    }
    match (last, node) {
        (Step::Key(key), Value::Object(map)) => map.remove(key).is_some(),
        (Step::Index(n), Value::Array(items)) if *n < items.len() => {
            items.remove(*n);
            true
        }
        _ => false,
    }
}

fn string_at<'a>(record: &'a mut Map<String, Value>, path: &[Step]) -> Option<&'a mut String> {
    let (first, rest) = path.split_first()?;
    let Step::Key(key) = first else { return None };
    let mut node = record.get_mut(key)?;
    for step in rest {
        node = match (step, node) {
            (Step::Key(key), Value::Object(map)) => map.get_mut(key)?,
            (Step::Index(n), Value::Array(items)) => items.get_mut(*n)?,
            _ => return None,
        };
    }
    match node {
        Value::String(text) => Some(text),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::{CheckOptions, check_bytes};
    use crate::fuzz::generator::{Config, stream};
    use arbitrary::Unstructured;

    #[test]
    fn a_planted_violation_shrinks_to_the_records_it_needs() {
        let mut generated = (0..50)
            .map(|seed| {
                let data = crate::fuzz::seeded_bytes(seed, 20_000);
                stream(&mut Unstructured::new(&data), &Config::default()).expect("a stream")
            })
            .find(|s| s.records.len() > 10)
            .expect("a stream of more than 10 records");
        // Plant an image part with both data and a blob (ASR-212) in a message in the middle.
        let middle = generated.records.len() / 2;
        let seq = generated.records[middle]["seq"].clone();
        generated.records.insert(
            middle + 1,
            serde_json::json!({"type": "message", "seq": seq, "id": "planted", "messageId": "mp", "role": "user",
                "content": [{"type": "text", "text": "context"}, {"type": "image", "mimeType": "image/png", "data": "AA==", "blob": {"blob": "sha256:0"}}]})
                .as_object().cloned().expect("an object"),
        );
        let breaks_212 = |s: &Stream| {
            check_bytes(&s.to_bytes(), &CheckOptions::default())
                .diagnostics
                .iter()
                .any(|d| d.rule == "ASR-212")
        };
        assert!(breaks_212(&generated));
        let small = shrink(&generated, breaks_212, 5_000);
        assert!(breaks_212(&small));
        assert_eq!(small.records.len(), 2, "{:#?}", small.records);
        assert_eq!(small.records[0]["type"], "session");
        let part = &small.records[1]["content"][0];
        // The smallest ASR-212 violation left: an image part lacking what the rule requires.
        assert_eq!(part["type"], "image");
        assert!(
            small.records[1]["content"]
                .as_array()
                .is_some_and(|c| c.len() == 1)
        );
        assert!(
            small.records[1].get("role").is_none(),
            "members not needed are dropped"
        );
    }

    #[test]
    fn the_budget_bounds_the_work() {
        let records = (0..50)
            .map(|n| {
                serde_json::json!({"seq": n})
                    .as_object()
                    .cloned()
                    .expect("an object")
            })
            .collect();
        let stream = Stream { records };
        let mut calls = 0;
        let _ = shrink(
            &stream,
            |_| {
                calls += 1;
                false
            },
            7,
        );
        assert_eq!(calls, 7);
    }
}
