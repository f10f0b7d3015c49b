//! A message's content parts and each one's effective author, origin and phase (ASR-224: "A
//! part's own value applies to that part; the message's value applies only to the parts
//! that do not carry one.").
//!
//! The value is the one written, whatever its JSON type: the checker reports a part's
//! wrong-typed author once, for its type, and it still applies to that part. The reading
//! reads members of another JSON type as absent (PROTOCOL.md, decision `member-types`: "a
//! part's `author: null` leaves the message's author"): [`Part::text`] gives that.

use serde_json::{Map, Value};

/// The members a part may carry for itself, else takes from its message (ASR-224).
pub const PART_DEFAULTS: [&str; 3] = ["author", "origin", "phase"];

/// One entry of a message's `content`.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Part<'a> {
    /// Its index in `content`.
    pub index: usize,
    /// The entry, when it is an object (a part that is no object carries nothing).
    pub object: Option<&'a Map<String, Value>>,
    /// The effective author.
    pub author: Effective<'a>,
    /// The effective origin.
    pub origin: Effective<'a>,
    /// The effective phase.
    pub phase: Effective<'a>,
    message: &'a Map<String, Value>,
}

/// An effective value and where it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Effective<'a> {
    /// The value, of any JSON type; `None` when neither the part nor the message has one.
    pub value: Option<&'a Value>,
    /// Where it is written (the message, when neither has one).
    pub at: At,
}

/// Where an effective value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum At {
    /// In the part at this index of `content`.
    Part(usize),
    /// In the message.
    Message,
}

impl Effective<'_> {
    /// The value when it is a string.
    pub fn as_str(&self) -> Option<&str> {
        self.value.and_then(Value::as_str)
    }

    /// The JSON Pointer of the member `key` where the value is written.
    pub fn pointer(&self, key: &str) -> String {
        match self.at {
            At::Part(n) => format!("/content/{n}/{key}"),
            At::Message => format!("/{key}"),
        }
    }
}

impl<'a> Part<'a> {
    /// The part at `index` of `message`'s content, `entry`.
    pub fn new(message: &'a Map<String, Value>, index: usize, entry: &'a Value) -> Self {
        let object = entry.as_object();
        let effective = |key: &str| match object.and_then(|o| o.get(key)) {
            Some(value) => Effective {
                value: Some(value),
                at: At::Part(index),
            },
            None => Effective {
                value: message.get(key),
                at: At::Message,
            },
        };
        Part {
            index,
            object,
            author: effective("author"),
            origin: effective("origin"),
            phase: effective("phase"),
            message,
        }
    }

    /// The effective value of `key`, one of [`PART_DEFAULTS`] (`None` for another key).
    pub fn effective(&self, key: &str) -> Option<Effective<'a>> {
        match key {
            "author" => Some(self.author),
            "origin" => Some(self.origin),
            "phase" => Some(self.phase),
            _ => None,
        }
    }

    /// The effective value of `key` as the reading reads it: the part's own string, else
    /// the message's string; a member of another JSON type reads as absent (decision
    /// `member-types`), so that the message's value shows through it.
    pub fn text(&self, key: &str) -> Option<&'a str> {
        self.object
            .and_then(|o| o.get(key))
            .and_then(Value::as_str)
            .or_else(|| self.message.get(key).and_then(Value::as_str))
    }

    /// The part's `type`, when it is a string.
    pub fn kind(&self) -> Option<&'a str> {
        self.object
            .and_then(|o| o.get("type"))
            .and_then(Value::as_str)
    }
}

/// The effective value of `key` (one of [`PART_DEFAULTS`]) for what `pointer` is in: the
/// part of `record` at `/content/N/...` or `/displayContent/N/...`, else the record itself.
pub fn effective_at<'a>(
    record: &'a Map<String, Value>,
    pointer: &str,
    key: &str,
) -> Option<&'a Value> {
    let mut segments = pointer.trim_start_matches('/').split('/');
    if let (Some(array @ ("content" | "displayContent")), Some(index)) =
        (segments.next(), segments.next())
        && let Some((n, entry)) = index
            .parse::<usize>()
            .ok()
            .and_then(|n| Some((n, record.get(array)?.as_array()?.get(n)?)))
    {
        return Part::new(record, n, entry).effective(key)?.value;
    }
    record.get(key)
}

/// Every entry of `record`'s `content` (none when it is no array), in order.
pub fn parts(record: &Map<String, Value>) -> impl Iterator<Item = Part<'_>> {
    let content = match record.get("content") {
        Some(Value::Array(parts)) => parts.as_slice(),
        _ => &[],
    };
    parts_of(record, content)
}

/// Every entry of `content` as a part of `message` (which may hold its content elsewhere,
/// while it is being built).
pub fn parts_of<'a>(
    message: &'a Map<String, Value>,
    content: &'a [Value],
) -> impl Iterator<Item = Part<'a>> {
    content
        .iter()
        .enumerate()
        .map(move |(n, entry)| Part::new(message, n, entry))
}

/// The units a message's author, origin and phase are judged in: each part that is an
/// object, or the message itself (an [`Effective`] at the message) when it has none.
pub fn units(record: &Map<String, Value>) -> Vec<Unit<'_>> {
    let parts: Vec<Unit<'_>> = parts(record)
        .filter(|p| p.object.is_some())
        .map(Unit::Part)
        .collect();
    if parts.is_empty() {
        vec![Unit::Message(record)]
    } else {
        parts
    }
}

/// A part, or a message without parts, whose author, origin and phase are judged.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Unit<'a> {
    /// A part that is an object.
    Part(Part<'a>),
    /// A message without such parts: its own values.
    Message(&'a Map<String, Value>),
}

impl<'a> Unit<'a> {
    /// The effective value of `key` (one of [`PART_DEFAULTS`]).
    pub fn effective(&self, key: &str) -> Effective<'a> {
        match self {
            Unit::Part(part) => part.effective(key).unwrap_or(Effective {
                value: None,
                at: At::Message,
            }),
            Unit::Message(message) => Effective {
                value: message.get(key),
                at: At::Message,
            },
        }
    }
}

/// `record` with each object part of its `content` given the effective author, origin and
/// phase it takes from the message (ASR-224), so that a JSON Pointer into a part sees the
/// value that applies to it. Only messages have parts that take values; other records come
/// back as they are.
pub fn with_effective_parts(record: &Value) -> Value {
    let mut out = record.clone();
    let Some(message) = record.as_object() else {
        return out;
    };
    if message.get("type").and_then(Value::as_str) != Some("message") {
        return out;
    }
    let filled: Vec<(usize, Vec<(&str, &Value)>)> = parts(message)
        .filter(|p| p.object.is_some())
        .map(|p| {
            let taken = PART_DEFAULTS
                .iter()
                .filter_map(|key| {
                    let effective = p.effective(key)?;
                    Some((
                        *key,
                        effective.value.filter(|_| effective.at == At::Message)?,
                    ))
                })
                .collect();
            (p.index, taken)
        })
        .collect();
    if let Some(Value::Array(content)) = out.get_mut("content") {
        for (index, taken) in filled {
            if let Some(Value::Object(part)) = content.get_mut(index) {
                for (key, value) in taken {
                    part.insert(key.to_owned(), value.clone());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_parts_own_value_applies_whatever_its_type_and_else_the_messages() {
        let message = json!({"type": "message", "author": "model", "origin": "notice",
            "content": [{"type": "text", "author": 5}, {"type": "text", "origin": null}, "x"]});
        let message = message.as_object().expect("an object");
        let parts: Vec<Part<'_>> = parts(message).collect();
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0].author.value, Some(&json!(5)));
        assert_eq!(parts[0].author.pointer("author"), "/content/0/author");
        assert_eq!(parts[0].origin.pointer("origin"), "/origin");
        assert_eq!(parts[1].origin.value, Some(&Value::Null));
        assert_eq!(
            parts[1].phase,
            Effective {
                value: None,
                at: At::Message
            }
        );
        // The reading's view: a wrong-typed member reads as absent.
        assert_eq!(parts[0].text("author"), Some("model"));
        assert_eq!(parts[1].text("origin"), Some("notice"));
        assert!(parts[2].object.is_none() && parts[2].kind().is_none());
        assert_eq!(parts[2].text("author"), Some("model"));
    }

    #[test]
    fn a_message_without_object_parts_is_judged_by_its_own_values() {
        let empty = json!({"author": "model", "content": [1]});
        let units = units(empty.as_object().expect("an object"));
        assert!(matches!(units.as_slice(), [Unit::Message(_)]));
        assert_eq!(units[0].effective("author").as_str(), Some("model"));
    }

    #[test]
    fn effective_parts_fill_what_the_message_gives_and_keep_what_the_part_has() {
        let message = json!({"type": "message", "author": "model", "phase": "final",
            "content": [{"type": "text", "author": "harness"}, 7]});
        let filled = with_effective_parts(&message);
        assert_eq!(
            filled["content"],
            json!([{"type": "text", "author": "harness", "phase": "final"}, 7])
        );
        let plan = json!({"type": "plan", "author": "model", "content": [{"type": "text"}]});
        assert_eq!(with_effective_parts(&plan), plan);
    }
}
