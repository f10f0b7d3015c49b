//! What the checks across records keep of a line until its turn comes: the record's members
//! the view reads ([`crate::model::keep_essentials`]), or, for the most common record (its
//! view members all strings but `seq`, a number), those strings alone in one buffer, with no
//! map and no string of its own for each member and each name.

use crate::model::{NATIVE_KEYS, Record, is_essential};
use crate::tape::{Members, Node};
use serde_json::{Map, Number, Value};

/// A record as the checks across records read it.
#[derive(Debug)]
pub(crate) enum Kept {
    /// Its members, all or the essentials.
    Object(Map<String, Value>),
    /// Its view members, all of them strings but `seq`.
    Scalars(Scalars),
}

impl Kept {
    /// What the checks across records read of a record read as a tape.
    pub(crate) fn of(members: Members<'_>) -> Kept {
        if let Some(scalars) = Scalars::of(members) {
            return Kept::Scalars(scalars);
        }
        let mut essentials = Map::new();
        for (name, value) in members.iter() {
            if is_essential(name) {
                essentials.insert(name.to_owned(), essential(name, value));
            }
        }
        Kept::Object(essentials)
    }

    /// The view of the record kept.
    pub(crate) fn record(&self) -> Record<'_> {
        match self {
            Kept::Object(object) => Record::new(object),
            Kept::Scalars(scalars) => scalars.record(),
        }
    }

    /// Cuts a full record down to what the checks across records read.
    pub(crate) fn keep_essentials(&mut self) {
        if let Kept::Object(object) = self {
            crate::model::keep_essentials(object);
        }
    }
}

/// The string members [`Record::new`] types, in the order of this list, then the native ids
/// in the order of [`NATIVE_KEYS`].
const STRINGS: [&str; 6] = [
    "type",
    "id",
    "supersedes",
    "conversation",
    "message",
    "childSession",
];

const SLOTS: usize = STRINGS.len() + NATIVE_KEYS.len();

/// The string members of a record, and its `seq`.
#[derive(Debug)]
pub(crate) struct Scalars {
    text: String,
    /// Where each of [`STRINGS`] and [`NATIVE_KEYS`] is in `text`, when present.
    spans: [Option<(u32, u32)>; SLOTS],
    seq: Option<Value>,
    /// The view's object: no member it reads through it is among these.
    empty: Map<String, Value>,
}

impl Scalars {
    /// The record's view members, when each of them is one of [`STRINGS`] or
    /// [`NATIVE_KEYS`] and a string, or `seq` and a number.
    fn of(members: Members<'_>) -> Option<Scalars> {
        let mut seq = None;
        let mut strings: [Option<&str>; SLOTS] = [None; SLOTS];
        for (name, value) in members.iter() {
            if !is_essential(name) {
                continue;
            }
            if name == "seq" {
                seq = Some(Value::Number(Number::clone(value.number()?)));
                continue;
            }
            let slot = STRINGS
                .iter()
                .chain(&NATIVE_KEYS)
                .position(|key| *key == name)?;
            strings[slot] = Some(value.str()?);
        }
        let mut text = String::with_capacity(strings.iter().flatten().map(|s| s.len()).sum());
        let mut spans = [None; SLOTS];
        for (span, string) in spans.iter_mut().zip(strings) {
            if let Some(string) = string {
                let start = u32::try_from(text.len()).ok()?;
                text.push_str(string);
                *span = Some((start, u32::try_from(text.len()).ok()?));
            }
        }
        Some(Scalars {
            text,
            spans,
            seq,
            empty: Map::new(),
        })
    }

    fn get(&self, slot: usize) -> Option<&str> {
        let (start, end) = self.spans[slot]?;
        self.text.get(start as usize..end as usize)
    }

    /// The view [`Record::new`] makes of the record these members are of.
    fn record(&self) -> Record<'_> {
        let reference = |slot| self.get(slot).filter(|r| !r.is_empty());
        let mut natives = [None; NATIVE_KEYS.len()];
        for (at, native) in natives.iter_mut().enumerate() {
            *native = self.get(STRINGS.len() + at);
        }
        Record {
            object: &self.empty,
            kind: self.get(0),
            seq: self.seq.as_ref().and_then(Value::as_u64),
            seq_value: self.seq.as_ref(),
            id: self.get(1),
            supersedes: reference(2),
            copied_from: None,
            lineage: None,
            natives,
            conversation: self.get(3),
            message: reference(4),
            child_session: self.get(5),
            derived_from: None,
        }
    }
}

/// A member as the checks across records read it: of the header's `agent` its `name`, of
/// its `producer` its `lossy` ([`Record::header`]), of any other the whole.
fn essential(name: &str, value: Node<'_>) -> Value {
    let within = match name {
        "agent" => "name",
        "producer" => "lossy",
        _ => return value.value(),
    };
    match value.object() {
        Some(members) => Value::Object(
            members
                .get(within)
                .map(|inner| (within.to_owned(), inner.value()))
                .into_iter()
                .collect(),
        ),
        None => value.value(),
    }
}

#[cfg(test)]
mod tests {
    use super::Kept;
    use crate::model::Record;
    use crate::tape::Doc;
    use serde_json::{Map, Value};

    /// What the checks across records read of a view: its fields but its object, and what
    /// it tells through its object.
    fn read(record: &Record<'_>) -> String {
        let header = record.header();
        let conversations: Vec<&str> = record.conversations().collect();
        let sessions: Vec<_> = record.sessions(true).collect();
        let mut record = *record;
        let empty = Map::new();
        record.object = &empty;
        format!("{record:?} {header:?} {conversations:?} {sessions:?}")
    }

    fn kept(line: &[u8]) -> Option<Kept> {
        Some(Kept::of(Doc::parse(line)?.root().object()?))
    }

    #[test]
    fn a_record_kept_is_viewed_as_its_members_are() {
        let mut scalars = 0;
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for path in crate::check::corpus_streams() {
            let bytes = std::fs::read(&path).expect("a corpus stream");
            lines.extend(bytes.split(|&b| b == b'\n').map(<[u8]>::to_vec));
        }
        lines.extend(
            [
                r#"{"type":"message","seq":3,"id":"","supersedes":"","message":"","x":1}"#,
                r#"{"type":"delivery","seq":-1,"id":"d","message":"m","callId":"c","turnId":""}"#,
                r#"{"type":"x","seq":1.5,"conversation":"c","childSession":"s","planId":"p"}"#,
                r#"{"seq":18446744073709551616,"inferenceId":"i","messageId":"m"}"#,
                r#"{"type":"message","id":5}"#,
                r#"{"type":"message","seq":"1"}"#,
                r#"{"type":"session","agent":{"name":"a"}}"#,
            ]
            .map(|line| line.as_bytes().to_vec()),
        );
        for line in &lines {
            let Some(kept) = kept(line) else {
                continue;
            };
            scalars += usize::from(matches!(kept, Kept::Scalars(_)));
            let Ok(Value::Object(mut object)) = crate::json::parse(line).map(|p| p.value) else {
                panic!(
                    "the tape read what serde_json does not: {}",
                    String::from_utf8_lossy(line)
                );
            };
            crate::model::keep_essentials(&mut object);
            assert_eq!(
                read(&kept.record()),
                read(&Record::new(&object)),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        assert!(scalars > 1000, "{scalars} records kept as strings");
        // What is not a string (or seq, a number) is kept as a map.
        for line in [
            r#"{"type":"message","id":5}"#,
            r#"{"type":"message","seq":"1"}"#,
            r#"{"type":"session","agent":{"name":"a"}}"#,
            r#"{"type":"message","derivedFrom":[]}"#,
        ] {
            let kept = kept(line.as_bytes()).expect("an object");
            assert!(matches!(kept, Kept::Object(_)), "{line}");
        }
    }
}
