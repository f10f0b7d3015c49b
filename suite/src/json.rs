//! Parsing one line of JSON into a `serde_json::Value`, noticing what serde_json would hide:
//! duplicate member names (it keeps the last silently) and the kind of a syntax failure.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use std::fmt;

/// The deepest nesting a line may have: the line's object is at depth 1, a value inside it
/// at depth 2, and so on. Deeper input is refused before it is read, so the stack stays small.
pub const MAX_DEPTH: usize = 128;

/// A line parsed into a value.
#[derive(Debug)]
#[non_exhaustive]
pub struct Parsed {
    /// The value; for a duplicated member name, the last member counts.
    pub value: Value,
    /// JSON Pointers of members whose name appears more than once in their object.
    pub duplicates: Vec<String>,
}

/// Why a line is not JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Failure {
    /// Not JSON, or JSON with text after it; `eof` when the text ended too soon.
    Syntax {
        /// serde_json's description, without its position.
        message: String,
        /// 1-based column (byte) where it went wrong.
        column: usize,
        /// The input ended in the middle of a value.
        eof: bool,
    },
    /// Deeper than [`MAX_DEPTH`].
    TooDeep {
        /// 1-based column where the limit was hit.
        column: usize,
    },
    /// A number beyond the range of a double.
    NumberOutOfRange {
        /// 1-based column of the number.
        column: usize,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Syntax {
                message, column, ..
            } => write!(f, "{message} at column {column}"),
            Failure::TooDeep { column } => {
                write!(
                    f,
                    "nesting deeper than {MAX_DEPTH} levels at column {column}"
                )
            }
            Failure::NumberOutOfRange { column } => {
                write!(
                    f,
                    "a number beyond the range of a double at column {column}"
                )
            }
        }
    }
}

/// Parses one line of JSON. A line that parses is valid UTF-8: serde_json checks the bytes
/// of every string, and outside strings only ASCII is JSON.
pub fn parse(text: &[u8]) -> Result<Parsed, Failure> {
    let mut found = false;
    let value = parse_with(text, &mut Tracker::Flag(&mut found))?;
    if !found {
        return Ok(Parsed {
            value,
            duplicates: Vec::new(),
        });
    }
    // Duplicates are rare: parse again, this time keeping paths, to name them.
    let mut paths = Vec::new();
    let mut path = String::new();
    parse_with(
        text,
        &mut Tracker::Paths {
            path: &mut path,
            found: &mut paths,
        },
    )?;
    Ok(Parsed {
        value,
        duplicates: paths,
    })
}

fn parse_with(text: &[u8], tracker: &mut Tracker<'_>) -> Result<Value, Failure> {
    let mut de = serde_json::Deserializer::from_slice(text);
    // The seed counts depth itself and stops at MAX_DEPTH (serde_json's own limit stops at 127).
    de.disable_recursion_limit();
    let value = ValueSeed { tracker, depth: 0 }
        .deserialize(&mut de)
        .map_err(|e| classify(&e, text))?;
    de.end().map_err(|e| classify(&e, text))?;
    Ok(value)
}

fn classify(error: &serde_json::Error, line: &[u8]) -> Failure {
    let column = error.column().max(1);
    let text = error.to_string();
    let mut message = text.split(" at line ").next().unwrap_or(&text).to_owned();
    if let Some(escape) = message
        .contains("hex escape")
        .then(|| lone_surrogate(line, column))
        .flatten()
    {
        message = format!(
            "`\\u{escape}` is half of a UTF-16 surrogate pair without its other half (a lone surrogate is not text)"
        );
    }
    if message.contains(TOO_DEEP) {
        Failure::TooDeep { column }
    } else if message.contains("number out of range") {
        Failure::NumberOutOfRange { column }
    } else {
        Failure::Syntax {
            eof: error.is_eof(),
            message,
            column,
        }
    }
}

/// The last `\\uXXXX` escape before `column` (1-based), when it names a surrogate: serde_json
/// reports a lone one as a broken hex escape.
fn lone_surrogate(line: &[u8], column: usize) -> Option<String> {
    let before = &line[..column.min(line.len())];
    let at = before.windows(2).rposition(|w| w == b"\\u")?;
    let hex = std::str::from_utf8(line.get(at + 2..at + 6)?).ok()?;
    let unit = u16::from_str_radix(hex, 16).ok()?;
    (0xD800..=0xDFFF).contains(&unit).then(|| hex.to_owned())
}

enum Tracker<'a> {
    Flag(&'a mut bool),
    Paths {
        path: &'a mut String,
        found: &'a mut Vec<String>,
    },
}

struct ValueSeed<'t, 'a> {
    tracker: &'t mut Tracker<'a>,
    /// The depth of the container holding the value (0 for the line itself).
    depth: usize,
}

/// The message of the error that stops too deep a line; [`classify`] knows it.
const TOO_DEEP: &str = "recursion limit exceeded";

impl<'de> DeserializeSeed<'de> for ValueSeed<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(serde::de::Error::custom(TOO_DEEP));
        }
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        loop {
            let mark = self.tracker.enter_index(items.len());
            let item = seq.next_element_seed(ValueSeed {
                tracker: &mut *self.tracker,
                depth,
            })?;
            self.tracker.leave(mark);
            match item {
                Some(item) => items.push(item),
                None => return Ok(Value::Array(items)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let depth = self.depth + 1;
        if depth > MAX_DEPTH {
            return Err(serde::de::Error::custom(TOO_DEEP));
        }
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let mark = self.tracker.enter(&key);
            let value = map.next_value_seed(ValueSeed {
                tracker: &mut *self.tracker,
                depth,
            })?;
            self.tracker.leave(mark);
            match members.entry(key) {
                Entry::Occupied(mut member) => {
                    self.tracker.duplicate(member.key());
                    member.insert(value);
                }
                Entry::Vacant(member) => {
                    member.insert(value);
                }
            }
        }
        Ok(Value::Object(members))
    }
}

impl Tracker<'_> {
    fn enter(&mut self, token: &str) -> usize {
        match self {
            Tracker::Flag(_) => 0,
            Tracker::Paths { path, .. } => {
                let mark = path.len();
                crate::diagnostic::push_token(path, token);
                mark
            }
        }
    }

    fn enter_index(&mut self, index: usize) -> usize {
        match self {
            Tracker::Flag(_) => 0,
            Tracker::Paths { path, .. } => {
                let mark = path.len();
                path.push('/');
                path.push_str(&index.to_string());
                mark
            }
        }
    }

    fn leave(&mut self, mark: usize) {
        if let Tracker::Paths { path, .. } = self {
            path.truncate(mark);
        }
    }

    fn duplicate(&mut self, key: &str) {
        match self {
            Tracker::Flag(found) => **found = true,
            Tracker::Paths { path, found } if found.len() <= crate::diagnostic::MAX_PER_LINE => {
                let mut pointer = (*path).clone();
                crate::diagnostic::push_token(&mut pointer, key);
                found.push(pointer);
            }
            Tracker::Paths { .. } => {}
        }
    }
}

/// Equal, JSON types kept apart (`1` is not `1.0`, `true` is not `1`): how readings and
/// fidelity assertions compare values.
///
/// ```
/// use asr_suite::json::same;
/// use serde_json::json;
///
/// assert!(same(&json!({"a": [1, "x"]}), &json!({"a": [1, "x"]})));
/// assert!(!same(&json!(1), &json!(1.0)));
/// assert!(!same(&json!(true), &json!(1)));
/// ```
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        _ => a == b && std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_serde_json() {
        let text = r#"{"a":[1,-2,3.5,"x",null,true,{"b":{}}],"c":"\u00e9\n"}"#;
        let parsed = parse(text.as_bytes()).expect("valid");
        let plain: Value = serde_json::from_str(text).expect("valid");
        assert_eq!(parsed.value, plain);
        assert!(parsed.duplicates.is_empty());
    }

    #[test]
    fn duplicate_names_are_found_with_their_pointer_and_the_last_wins() {
        let parsed =
            parse(br#"{"a":1,"b":{"c":1,"c":2},"l":[{"x/y":0,"x/y":1}],"a":3}"#).expect("valid");
        assert_eq!(parsed.duplicates, ["/b/c", "/l/0/x~1y", "/a"]);
        assert_eq!(parsed.value["a"], 3);
        assert_eq!(parsed.value["b"]["c"], 2);
    }

    #[test]
    fn failures_are_classified() {
        assert!(matches!(
            parse(br#"{"a": 1e400}"#),
            Err(Failure::NumberOutOfRange { .. })
        ));
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(matches!(
            parse(deep.as_bytes()),
            Err(Failure::TooDeep { .. })
        ));
        let at_limit = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(at_limit.as_bytes()).is_ok());
        let over = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert!(matches!(
            parse(over.as_bytes()),
            Err(Failure::TooDeep { .. })
        ));
        let objects = format!(
            "{}1{}",
            "{\"a\":".repeat(MAX_DEPTH + 1),
            "}".repeat(MAX_DEPTH + 1)
        );
        assert!(matches!(
            parse(objects.as_bytes()),
            Err(Failure::TooDeep { .. })
        ));
        match parse(br#"{"a": "b"#) {
            Err(Failure::Syntax { eof, .. }) => assert!(eof),
            other => panic!("{other:?}"),
        }
        for lone in [
            &br#"{"t": "a\ud800b"}"#[..],
            br#"{"t": "\udc00"}"#,
            br#"{"t": "\ud83d\u0041"}"#,
        ] {
            match parse(lone) {
                Err(Failure::Syntax { message, .. }) => {
                    assert!(message.contains("surrogate"), "{message}");
                    assert!(!message.contains("end of hex escape"), "{message}");
                }
                other => panic!("{other:?}"),
            }
        }
        match parse(br#"{"t": "\u12"}"#) {
            Err(Failure::Syntax { message, .. }) => {
                assert!(!message.contains("surrogate"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        match parse(br#"{"a": 1} x"#) {
            Err(Failure::Syntax {
                eof,
                column,
                message,
            }) => {
                assert!(!eof);
                assert_eq!(column, 10);
                assert!(message.contains("trailing"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn huge_integers_become_doubles_and_whitespace_around_is_fine() {
        let parsed = parse(b" {\"n\": 123456789012345678901234567890}\r").expect("valid");
        assert!(parsed.value["n"].is_f64());
    }
}
